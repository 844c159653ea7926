/**
 * The OpenAPI 3.1 description of this interface (spec Versioning 2: version 10.1.0),
 * generated from the zod schemas the handlers use. Served at /api/v1/openapi.json; the
 * conformance suite validates every response it sees against it.
 */
import { z } from 'zod';
import { ERRORS } from './errors.ts';
import { checkoutPaths } from './checkout/openapi-paths.ts';
import { paymentLinkPaths } from './commerce/openapi-paths.ts';
import { invoicePaths } from './invoices/openapi-paths.ts';
import './schemas/common.ts';
import './schemas/ops.ts';
import './schemas/refund.ts';
import { LIMITS, statusEnum } from './schemas/payment-intent.ts';
import { api } from './schemas/registry.ts';

export const API_VERSION = '10.1.0';

type Json = Record<string, unknown>;

const ref = (id: string): Json => ({ $ref: `#/components/schemas/${id}` });
const json = (schema: Json, description: string, headers?: Json): Json => ({
  description,
  ...(headers ? { headers } : {}),
  content: { 'application/json': { schema } },
});

const RATE_HEADERS: Json = {
  'X-RateLimit-Limit': { description: 'Capacity of the tighter dimension (key or IP).', schema: { type: 'integer' } },
  'X-RateLimit-Remaining': { description: 'Whole tokens left in that bucket (floored).', schema: { type: 'integer' } },
  'X-RateLimit-Reset': { description: 'Seconds until that bucket is full.', schema: { type: 'integer' } },
};

/** Error responses by status, each with the codes it can carry. */
function errors(...statuses: number[]): Json {
  const out: Json = {};
  for (const status of [...statuses, 500]) {
    const codes = Object.entries(ERRORS)
      .filter(([, e]) => e.status === status)
      .map(([c]) => c);
    const headers = status === 429 ? { ...RATE_HEADERS, 'Retry-After': { description: 'Seconds.', schema: { type: 'integer' } } } : undefined;
    out[String(status)] = json(ref('Error'), `Error: ${codes.join(', ')}.`, headers);
  }
  return out;
}

const bearer = [{ apiKey: [] }];
const operator = [{ operatorToken: [] }];
const idParam = { name: 'id', in: 'path', required: true, schema: { type: 'string' } };

function op(summary: string, o: Json): Json {
  return { summary, 'x-status': 'live', ...o };
}

function schemas(io: 'input' | 'output'): Record<string, Json> {
  const out = z.toJSONSchema(api, { target: 'draft-2020-12', io, uri: (id) => `#/components/schemas/${id}`, unrepresentable: 'any' });
  return out.schemas;
}

const REQUEST_SCHEMAS = ['CreatePaymentIntentRequest', 'CreateMerchantRequest', 'CreateKeyRequest', 'RevokeKeyRequest', 'SetAllowedOriginsRequest', 'CreateRefundRequest', 'SubmitRefundRequest', 'SetPayoutRequest', 'CreatePaymentLinkRequest', 'CreateInvoiceRequest'];

export function openApiDocument(baseUrl: string): Json {
  const out = schemas('output');
  const input = schemas('input');
  for (const id of REQUEST_SCHEMAS) out[id] = input[id]!;
  for (const s of Object.values(out)) delete s.$schema;
  const intent = json(ref('PaymentIntent'), 'The payment intent.', RATE_HEADERS);
  return {
    openapi: '3.1.0',
    info: { title: 'ANM Pay merchant API', version: API_VERSION, description: 'Payment intents in ANM, scoped to the merchant and mode of the API key.' },
    servers: [{ url: baseUrl }],
    security: bearer,
    paths: {
      '/api/v1/payment-intents': {
        post: op('Create a payment intent', {
          parameters: [
            { name: 'Idempotency-Key', in: 'header', required: true, schema: { type: 'string', minLength: 1, maxLength: LIMITS.idempotencyKey } },
          ],
          requestBody: { required: true, content: { 'application/json': { schema: ref('CreatePaymentIntentRequest') } } },
          responses: {
            '201': json(ref('PaymentIntent'), 'Created.', RATE_HEADERS),
            '200': json(ref('PaymentIntent'), 'A replay of the first response (header idempotent-replay: true), or the existing intent for this merchant_order_id.', {
              ...RATE_HEADERS,
              'idempotent-replay': { schema: { type: 'string', const: 'true' } },
            }),
            ...errors(400, 401, 403, 409, 413, 429),
          },
        }),
        get: op('List payment intents, newest first', {
          parameters: [
            { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: LIMITS.listMax, default: LIMITS.listDefault } },
            { name: 'status', in: 'query', schema: z.toJSONSchema(statusEnum, { target: 'draft-2020-12' }) },
            { name: 'starting_after', in: 'query', schema: { type: 'string' } },
            { name: 'merchant_order_id', in: 'query', schema: { type: 'string', maxLength: LIMITS.merchant_order_id } },
          ],
          responses: { '200': json(ref('PaymentIntentList'), 'A page of intents.', RATE_HEADERS), ...errors(400, 401, 403, 429) },
        }),
      },
      '/api/v1/payment-intents/{id}': {
        get: op('Retrieve a payment intent', { parameters: [idParam], responses: { '200': intent, ...errors(400, 401, 403, 404, 429) } }),
      },
      '/api/v1/payment-intents/{id}/cancel': {
        post: op('Cancel a payment intent (to EXPIRED)', { parameters: [idParam], responses: { '200': intent, ...errors(400, 401, 403, 404, 409, 413, 429) } }),
      },
      '/api/v1/balance': {
        get: op("Balance for the key's mode", { responses: { '200': json(ref('Balance'), 'The balance.', RATE_HEADERS), ...errors(401, 403, 429) } }),
      },
      '/api/v1/refunds': {
        post: op('Create a refund (live mode only): a new transfer the merchant signs', {
          parameters: [{ name: 'Idempotency-Key', in: 'header', required: false, schema: { type: 'string', minLength: 1, maxLength: 255 } }],
          requestBody: { required: true, content: { 'application/json': { schema: ref('CreateRefundRequest') } } },
          responses: {
            '201': json(ref('Refund'), 'Created; waits for the merchant signature.', RATE_HEADERS),
            '200': json(ref('Refund'), 'The refund this Idempotency-Key already created.', RATE_HEADERS),
            ...errors(400, 401, 403, 404, 409, 413, 429),
          },
        }),
      },
      '/api/v1/refunds/{id}': {
        get: op('Retrieve a refund, with the unsigned transfer while it waits for a signature', { parameters: [idParam], responses: { '200': json(ref('Refund'), 'The refund.', RATE_HEADERS), ...errors(400, 401, 403, 404, 429) } }),
      },
      '/api/v1/refunds/{id}/submit': {
        post: op('Broadcast the signed refund transfer', {
          parameters: [idParam],
          requestBody: { required: true, content: { 'application/json': { schema: ref('SubmitRefundRequest') } } },
          responses: { '200': json(ref('Refund'), 'Submitted.', RATE_HEADERS), ...errors(400, 401, 403, 404, 409, 413, 429) },
        }),
      },
      '/api/v1/openapi.json': {
        get: op('This document', { security: [], responses: { '200': json({ type: 'object' }, 'OpenAPI 3.1 document.') } }),
      },
      '/healthz': {
        get: op('Health', { security: [], responses: { '200': json(ref('Health'), 'Route traffic here.'), '503': json(ref('Health'), 'Draining, or the database is unreachable.') } }),
      },
      '/c/{id}/payment.json': {
        get: op('What a wallet needs to pay an intent (public: the unguessable id is the capability)', {
          security: [],
          parameters: [idParam],
          responses: { '200': json(ref('PaymentInstructions'), 'Payment instructions.', RATE_HEADERS), ...errors(400, 404, 429) },
        }),
      },
      ...checkoutPaths(),
      ...paymentLinkPaths({ json, errors, op, rateHeaders: RATE_HEADERS }),
      ...invoicePaths({ op, json, ref, errors, idParam, rateHeaders: RATE_HEADERS }),
      '/ops/api/merchants': {
        post: op('Operator: create a merchant (keys and password shown once)', {
          security: operator,
          requestBody: { required: true, content: { 'application/json': { schema: ref('CreateMerchantRequest') } } },
          responses: { '201': json(ref('CreatedMerchant'), 'Created.'), ...errors(400, 401, 409, 413) },
        }),
      },
      '/ops/api/merchants/{id}/keys': {
        post: op('Operator: create an API key (shown once)', {
          security: operator,
          parameters: [idParam],
          requestBody: { required: true, content: { 'application/json': { schema: ref('CreateKeyRequest') } } },
          responses: { '201': json(ref('CreatedKey'), 'Created.'), ...errors(400, 401, 404, 413) },
        }),
      },
      '/ops/api/keys/{id}/revoke': {
        post: op('Operator: revoke a key by id', { security: operator, parameters: [idParam], responses: { '200': json(ref('RevokedKey'), 'Revoked.'), ...errors(401, 404, 413) } }),
      },
      '/ops/api/keys/revoke': {
        post: op('Operator: revoke a key given the key itself', {
          security: operator,
          requestBody: { required: true, content: { 'application/json': { schema: ref('RevokeKeyRequest') } } },
          responses: { '200': json(ref('RevokedKey'), 'Revoked.'), ...errors(400, 401, 404, 413) },
        }),
      },
      '/ops/api/merchants/{id}/suspend': {
        post: op('Operator: suspend a merchant (its keys get 403)', { security: operator, parameters: [idParam], responses: { '200': json(ref('MerchantStatus'), 'Suspended.'), ...errors(401, 404, 413) } }),
      },
      '/ops/api/merchants/{id}/allowed-origins': {
        post: op('Operator: set the origins allowed to frame the checkout (embed=1)', {
          security: operator,
          parameters: [idParam],
          requestBody: { required: true, content: { 'application/json': { schema: ref('SetAllowedOriginsRequest') } } },
          responses: { '200': json(ref('AllowedOrigins'), 'Stored, normalised to origins.'), ...errors(400, 401, 404, 413) },
        }),
      },
      '/ops/api/merchants/{id}/payout': {
        post: op('Operator: set the payout address of a mode (anmpay payout set)', {
          security: operator,
          parameters: [idParam],
          requestBody: { required: true, content: { 'application/json': { schema: ref('SetPayoutRequest') } } },
          responses: { '200': json(ref('PayoutAddress'), 'Stored.'), ...errors(400, 401, 404, 413) },
        }),
      },
      '/ops/api/merchants/{id}/activate': {
        post: op('Operator: re-activate a merchant', { security: operator, parameters: [idParam], responses: { '200': json(ref('MerchantStatus'), 'Active.'), ...errors(401, 404, 413) } }),
      },
    },
    components: {
      schemas: out,
      securitySchemes: {
        apiKey: { type: 'http', scheme: 'bearer', description: 'Secret API key (ask_live_… or ask_test_…).' },
        operatorToken: { type: 'http', scheme: 'bearer', description: 'Operator token (ANMPAY_OPERATOR_TOKEN or <data dir>/operator-token).' },
      },
    },
  };
}
