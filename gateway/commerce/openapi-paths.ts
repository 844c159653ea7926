/**
 * Payment links in the OpenAPI document (DESIGN §7): the `/api/v1/payment-links` routes with
 * the `PaymentLink` object, and the public pages `/p/{handle}/{slug}` and `/l/{code}`, which
 * answer HTML (docs/payment-links.md).
 */
import { z } from 'zod';
import { api } from '../schemas/registry.ts';

const decimal = z.string().regex(/^[0-9]+(\.[0-9]+)?$/);

export const PaymentLink = z
  .strictObject({
    id: z.string().regex(/^plink_[a-z2-7]{24}$/),
    object: z.literal('payment_link'),
    mode: z.enum(['live', 'test']),
    slug: z.string(),
    code: z.string().regex(/^[a-z2-7]{8}$/),
    title: z.string(),
    description: z.string().nullable(),
    amount: decimal.optional().meta({ description: 'Fixed price (absent when the buyer chooses the amount).' }),
    min_amount: decimal.optional(),
    max_amount: decimal.optional(),
    currency: z.string(),
    units_total: z.number().int().nullable().meta({ description: 'Null: unlimited.' }),
    units_held: z.number().int().nullable(),
    units_sold: z.number().int().nullable(),
    units_left: z.number().int().nullable(),
    units_oversold: z.number().int().meta({ description: 'Late payments that found no unit left: refund them.' }),
    oversold_holds: z.array(z.string()),
    active: z.boolean(),
    success_url: z.string().nullable(),
    metadata: z.record(z.string(), z.unknown()),
    url: z.string(),
    short_url: z.string(),
    created_at: z.iso.datetime(),
  })
  .register(api, { id: 'PaymentLink' });

export const CreatePaymentLinkRequest = z
  .strictObject({
    slug: z.string().regex(/^[a-z0-9-]{1,64}$/),
    title: z.string().min(1).max(200),
    description: z.string().max(500).nullable().optional(),
    amount: z.string().optional(),
    currency: z.string().optional(),
    min_amount: z.string().optional(),
    max_amount: z.string().optional(),
    units_total: z.number().int().min(1).nullable().optional(),
    success_url: z.string().max(2048).nullable().optional(),
    metadata: z
      .record(z.string(), z.unknown())
      .optional()
      .meta({ description: 'JSON object, at most 4009 bytes serialized: its intents add payment_link and hold within 4096 (ADR 0070).' }),
  })
  .register(api, { id: 'CreatePaymentLinkRequest' });

type Json = Record<string, unknown>;
export interface PathHelpers {
  json: (schema: Json, description: string, headers?: Json) => Json;
  errors: (...statuses: number[]) => Json;
  op: (summary: string, o: Json) => Json;
  rateHeaders: Json;
}

const ref = (id: string): Json => ({ $ref: `#/components/schemas/${id}` });
const html = (description: string): Json => ({ description, content: { 'text/html': { schema: { type: 'string' } } } });
const linkId = { name: 'id', in: 'path', required: true, schema: { type: 'string', pattern: '^plink_[a-z2-7]{24}$' } };

export function paymentLinkPaths({ json, errors, op, rateHeaders }: PathHelpers): Json {
  const link = json(ref('PaymentLink'), 'The payment link.', rateHeaders);
  const page = [
    { name: 'handle', in: 'path', required: true, schema: { type: 'string', pattern: '^[a-z0-9-]{3,40}$' } },
    { name: 'slug', in: 'path', required: true, schema: { type: 'string', pattern: '^[a-z0-9-]{1,64}$' } },
  ];
  return {
    '/api/v1/payment-links': {
      post: op('Create a payment link', {
        parameters: [{ name: 'Idempotency-Key', in: 'header', required: false, schema: { type: 'string', minLength: 1, maxLength: 255 } }],
        requestBody: { required: true, content: { 'application/json': { schema: ref('CreatePaymentLinkRequest') } } },
        responses: { '201': json(ref('PaymentLink'), 'Created.', rateHeaders), '200': json(ref('PaymentLink'), 'What this Idempotency-Key already created.', rateHeaders), ...errors(400, 401, 403, 409, 413, 429) },
      }),
      get: op("List the key's mode's payment links, newest first", {
        parameters: [
          { name: 'limit', in: 'query', required: false, schema: { type: 'integer', minimum: 1, maximum: 100 } },
          { name: 'starting_after', in: 'query', required: false, schema: { type: 'string' } },
        ],
        responses: { '200': json({ type: 'object', properties: { object: { const: 'list' }, has_more: { type: 'boolean' }, data: { type: 'array', items: ref('PaymentLink') } } }, 'A page of links.', rateHeaders), ...errors(400, 401, 403, 429) },
      }),
    },
    '/api/v1/payment-links/{id}': { get: op('Retrieve a payment link', { parameters: [linkId], responses: { '200': link, ...errors(401, 403, 404, 429) } }) },
    '/api/v1/payment-links/{id}/deactivate': { post: op('Deactivate a payment link (its pages answer 404)', { parameters: [linkId], responses: { '200': link, ...errors(401, 403, 404, 429) } }) },
    '/p/{handle}/{slug}': {
      get: op('Payment link product page (public)', { security: [], tags: ['checkout'], parameters: page, responses: { '200': html('The product page, with an ETag (Cache-Control no-cache).'), '304': { description: 'If-None-Match named the page as it stands.' }, '404': html('Unknown or inactive link.') } }),
      post: op('A buyer presses Pay: holds a unit of a limited link, creates the intent, 303 to /c/{id}', {
        security: [],
        tags: ['checkout'],
        parameters: page,
        responses: {
          '303': { description: 'To the checkout `/c/{id}`.' },
          '400': html('An amount outside the link’s range.'),
          '403': html('A test link, without its merchant’s dashboard session.'),
          '404': html('Unknown or inactive link.'),
          '409': html('Sold out.'),
          '429': html('More than 10 presses a minute from this address on this link.'),
        },
      }),
    },
    '/l/{code}': {
      get: op('Short link: 302 to its product page', {
        security: [],
        tags: ['checkout'],
        parameters: [{ name: 'code', in: 'path', required: true, schema: { type: 'string' } }],
        responses: { '302': { description: 'To `/p/{handle}/{slug}`.' }, '404': html('Unknown code.') },
      }),
    },
  };
}
