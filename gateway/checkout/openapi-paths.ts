/**
 * The customer-facing surfaces in the OpenAPI document: the hosted checkout page `/c/{id}`,
 * its event stream `/c/{id}/events` and `/widget.js` (spec Endpoints). They answer HTML, an
 * event stream and JavaScript, not JSON; the status view carried by each `status` event is
 * described as a schema so the stream's data has a contract too (docs/checkout.md).
 */
import { z } from 'zod';
import { api } from '../schemas/registry.ts';
import { nanmString, statusEnum } from '../schemas/payment-intent.ts';

const nullableNanm = nanmString.nullable();

/** `machines/payment-intent/checkout-view.ts` CheckoutStatusView, the `data:` of a `status` event. */
export const CheckoutStatus = z
  .strictObject({
    version: z.number().int().min(0).meta({ description: 'Actor version of the snapshot rendered; the event id.' }),
    status: statusEnum,
    confirmations: z.number().int().min(0),
    required_confirmations: z.number().int().min(1),
    transaction_hash: z.string().nullable(),
    expires_at: z.iso.datetime(),
    success_url: z.string().nullable().meta({ description: 'Only while PAID.' }),
    notice: z.enum(['reorged', 'dropped']).nullable().meta({ description: 'Why the intent went back to AWAITING_PAYMENT on this change.' }),
    shortfall: nullableNanm.meta({ description: 'UNDERPAID: what the transaction lacks over both legs.' }),
    shortfall_formatted: z.string().nullable(),
    excess: nullableNanm.meta({ description: 'Paid above the amount.' }),
    excess_formatted: z.string().nullable(),
    payable: z.boolean().meta({ description: 'A payment sent now can still satisfy the intent.' }),
    final: z.boolean().meta({ description: 'Nothing more will be sent for this intent.' }),
  })
  .register(api, { id: 'CheckoutStatus' });

type Json = Record<string, unknown>;

const idParam = { name: 'id', in: 'path', required: true, schema: { type: 'string', pattern: '^pay_[a-z2-7]{24}$' } };
const html = (description: string): Json => ({ description, content: { 'text/html': { schema: { type: 'string' } } } });
const errorJson = (description: string, headers?: Json): Json => ({
  description,
  ...(headers ? { headers } : {}),
  content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
});
const retryAfter = { 'Retry-After': { description: 'Seconds.', schema: { type: 'integer' } } };
const op = (summary: string, o: Json): Json => ({ summary, 'x-status': 'live', security: [], tags: ['checkout'], ...o });

export function checkoutPaths(): Json {
  return {
    '/c/{id}': {
      get: op('Hosted checkout page of a payment intent (public: the unguessable id is the capability)', {
        description:
          'Server-rendered HTML with the page data in a `<script type="application/json" id="anm-checkout-data">` block. With `embed=1` and the publishable key of the intent\'s merchant and mode (`pk`) it may be framed by the merchant\'s allowed origins (CSP `frame-ancestors`); otherwise framing is denied. See docs/checkout.md.',
        parameters: [
          idParam,
          { name: 'embed', in: 'query', required: false, schema: { type: 'string', enum: ['1'] }, description: 'The widget iframe.' },
          { name: 'pk', in: 'query', required: false, schema: { type: 'string', pattern: '^apk_(live|test)_[A-Za-z0-9]{32}$' }, description: 'Publishable key; required with embed=1.' },
        ],
        responses: {
          '200': html('The checkout page.'),
          '404': html('No such intent, or an embed whose key or origins do not check out.'),
          '429': { ...html('Too many requests from this address (per-IP bucket).'), headers: retryAfter },
        },
      }),
    },
    '/c/{id}/events': {
      get: op('Server-Sent Events of the checkout status (consumed by the page; not an integration surface)', {
        description:
          'Each `status` event has the actor version as `id` and a CheckoutStatus as `data`; `: hb` comments every 15 s; `event: end` then close once the intent is final for the page. Resume with `Last-Event-ID` or `?last_event_id=`. See docs/checkout.md.',
        parameters: [
          idParam,
          { name: 'last_event_id', in: 'query', required: false, schema: { type: 'string', pattern: '^[0-9]{1,9}$' }, description: 'Version already shown; the Last-Event-ID header wins over it.' },
          { name: 'Last-Event-ID', in: 'header', required: false, schema: { type: 'string' } },
        ],
        responses: {
          '200': {
            description: 'The stream. Each `data:` line of a `status` event is one CheckoutStatus in JSON.',
            content: { 'text/event-stream': { schema: { type: 'string' }, 'x-item-schema': { $ref: '#/components/schemas/CheckoutStatus' } } },
          },
          '204': { description: 'The client already has the final version: EventSource stops.' },
          '404': errorJson('Error: not_found.'),
          '429': errorJson('Error: rate_limited (100 streams per address, 10 000 per process).', retryAfter),
        },
      }),
    },
    '/widget.js': {
      get: op('The embeddable widget script (publishable key only; opens the checkout in a modal iframe)', {
        description: 'Cacheable: ETag and `Cache-Control: public, max-age=300`; 304 on a matching If-None-Match. Usage and the postMessage protocol: docs/widget.md.',
        parameters: [{ name: 'If-None-Match', in: 'header', required: false, schema: { type: 'string' } }],
        responses: {
          '200': {
            description: 'The script.',
            headers: { ETag: { schema: { type: 'string' } }, 'Cache-Control': { schema: { type: 'string' } } },
            content: { 'text/javascript': { schema: { type: 'string' } } },
          },
          '304': { description: 'Not modified.' },
        },
      }),
    },
  };
}
