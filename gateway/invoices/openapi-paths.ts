/**
 * `/api/v1/invoices` in the OpenAPI document (DESIGN §7 "Invoices"): the request and resource
 * schemas (registered by name) and the paths. The hosted `/i/{token}` page answers HTML and is
 * described in docs/invoices.md.
 */
import { z } from 'zod';
import { INVOICE_LIMITS, LINE_ITEMS_MAX } from '../../machines/invoice/events.ts';
import { INVOICE_STATUSES } from '../../machines/invoice/view.ts';
import { api, chars } from '../schemas/registry.ts';

type Json = Record<string, unknown>;
const dateTime = z.iso.datetime().nullable();
const decimal = z.string().regex(/^[0-9]+(\.[0-9]+)?$/);
const status = z.enum(INVOICE_STATUSES);

const LineItem = z
  .strictObject({
    description: chars(INVOICE_LIMITS.description, 1),
    quantity: z.number().int().min(1).max(INVOICE_LIMITS.quantity),
    unit_price: decimal.meta({ description: 'Decimal string in `currency` units, as an intent amount (ANM: 9 places, fiat: 2).' }),
  })
  .register(api, { id: 'InvoiceLineItem' });

export const CreateInvoiceRequest = z
  .strictObject({
    customer_name: chars(INVOICE_LIMITS.customer_name, 1).nullable().optional(),
    customer_email: chars(INVOICE_LIMITS.customer_email, 3).nullable().optional(),
    line_items: z.array(LineItem).min(1).max(LINE_ITEMS_MAX),
    currency: z.string().optional().meta({ description: 'ANM (default) or a fiat code with a rate source; paid in ANM at the rate locked when the customer pays.' }),
    memo: chars(INVOICE_LIMITS.memo).nullable().optional(),
    due_at: z.string().nullable().optional().meta({ description: 'RFC 3339 date-time, or a date (due at its end, UTC).' }),
    metadata: z.record(z.string(), z.unknown()).optional(),
  })
  .register(api, { id: 'CreateInvoiceRequest' });

export const Invoice = z
  .strictObject({
    id: z.string(),
    object: z.literal('invoice'),
    mode: z.enum(['live', 'test']),
    status,
    overdue: z.boolean().meta({ description: 'OPEN and past due_at; it stays payable.' }),
    number: z.string().nullable().meta({ description: 'Per merchant and mode, given at finalize.' }),
    customer_name: z.string().nullable(),
    customer_email: z.string().nullable(),
    line_items: z.array(LineItem),
    currency: z.string(),
    total: decimal,
    memo: z.string().nullable(),
    due_at: dateTime,
    hosted_url: z.string().nullable().meta({ description: '/i/{token}, once finalized.' }),
    payment_intent: z.string().nullable().meta({ description: 'The current payment intent.' }),
    metadata: z.record(z.string(), z.unknown()),
    created_at: dateTime,
    finalized_at: dateTime,
    paid_at: dateTime,
    voided_at: dateTime,
    marked_uncollectible_at: dateTime,
  })
  .register(api, { id: 'Invoice' });

z.strictObject({ object: z.literal('list'), has_more: z.boolean(), data: z.array(Invoice) }).register(api, { id: 'InvoiceList' });

interface Helpers {
  op(summary: string, o: Json): Json;
  json(schema: Json, description: string, headers?: Json): Json;
  ref(id: string): Json;
  errors(...statuses: number[]): Json;
  idParam: Json;
  rateHeaders: Json;
}

export function invoicePaths(h: Helpers): Json {
  const one = h.json(h.ref('Invoice'), 'The invoice.', h.rateHeaders);
  const command = (summary: string) => ({ post: h.op(summary, { parameters: [h.idParam], responses: { '200': one, ...h.errors(400, 401, 403, 404, 409, 413, 429) } }) });
  return {
    '/api/v1/invoices': {
      post: h.op('Create a draft invoice', {
        parameters: [{ name: 'Idempotency-Key', in: 'header', required: false, schema: { type: 'string', minLength: 1, maxLength: 255 } }],
        requestBody: { required: true, content: { 'application/json': { schema: h.ref('CreateInvoiceRequest') } } },
        responses: { '201': one, '200': h.json(h.ref('Invoice'), 'The invoice this Idempotency-Key already created.', h.rateHeaders), ...h.errors(400, 401, 403, 409, 413, 429) },
      }),
      get: h.op('List invoices, newest first', {
        parameters: [
          { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 100, default: 20 } },
          { name: 'status', in: 'query', schema: z.toJSONSchema(status, { target: 'draft-2020-12' }) },
          { name: 'starting_after', in: 'query', schema: { type: 'string' } },
        ],
        responses: { '200': h.json(h.ref('InvoiceList'), 'A page of invoices.', h.rateHeaders), ...h.errors(400, 401, 403, 429) },
      }),
    },
    '/api/v1/invoices/{id}': { get: h.op('Retrieve an invoice', { parameters: [h.idParam], responses: { '200': one, ...h.errors(400, 401, 403, 404, 429) } }) },
    '/api/v1/invoices/{id}/finalize': command('Finalize a draft: number and hosted page (DRAFT → OPEN)'),
    '/api/v1/invoices/{id}/void': command('Void a draft or open invoice (→ VOID); its unpaid intent is canceled'),
    '/api/v1/invoices/{id}/mark-uncollectible': command('Mark an open invoice uncollectible (→ UNCOLLECTIBLE)'),
  };
}
