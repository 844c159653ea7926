/**
 * Wire shapes of the payment-intent resource (spec "Resources and their fields"). These zod
 * schemas are the boundary: requests are parsed with them and the OpenAPI document is
 * generated from them, so the document cannot drift from what the handlers accept.
 */
import { z } from 'zod';
import { PAYMENT_INTENT_STATUSES, type PaymentIntentStatus } from '../../machines/payment-intent/view.ts';
import { api, chars } from './registry.ts';

export const LIMITS = {
  merchant_order_id: 120,
  description: 500,
  url: 2048,
  metadataBytes: 4096,
  idempotencyKey: 255,
  listDefault: 20,
  listMax: 100,
} as const;

/** Fields the service decides (spec: refused with 400 `field_not_settable`). */
export const NOT_SETTABLE = ['merchant_address', 'treasury_address', 'protocol_fee', 'merchant_amount', 'protocol_fee_bps'] as const;

export const nanmString = z.string().regex(/^[0-9]+$/).meta({ description: 'Integer nANM as a decimal string (1 ANM = 10^9 nANM).' });
const dateTime = z.iso.datetime().nullable();
export const statusEnum = z.enum(PAYMENT_INTENT_STATUSES as [PaymentIntentStatus, ...PaymentIntentStatus[]]);
export const modeEnum = z.enum(['live', 'test']);
const DECIMAL = /^[0-9]+(\.[0-9]+)?$/;
const httpUrl = chars(LIMITS.url).regex(/^https?:\/\//i).meta({ description: 'Absolute http(s) URL.', format: 'uri' });

export const CreatePaymentIntentRequest = z
  .strictObject({
    amount: z.string().regex(DECIMAL).optional().meta({
      description: 'Decimal quantity of `currency`, greater than zero; at most 9 decimal places for ANM, 2 for fiat. Exactly one of amount / amount_nanm.',
    }),
    amount_nanm: nanmString.optional().meta({ description: 'Exact nANM; only with currency ANM. Exactly one of amount / amount_nanm.' }),
    currency: z.string().optional().meta({ description: '`ANM` (default) or a fiat code with a configured rate source.' }),
    merchant_order_id: chars(LIMITS.merchant_order_id, 1).nullable().optional().meta({
      description: 'Unique per merchant and mode: a second create for the same order returns the existing intent.',
    }),
    description: chars(LIMITS.description).nullable().optional(),
    metadata: z.record(z.string(), z.unknown()).optional().meta({ description: 'JSON object, at most 4096 bytes serialized.' }),
    success_url: httpUrl.nullable().optional(),
    cancel_url: httpUrl.nullable().optional(),
  })
  .register(api, { id: 'CreatePaymentIntentRequest' });
export type CreatePaymentIntentRequest = z.infer<typeof CreatePaymentIntentRequest>;

export const PaymentIntent = z
  .strictObject({
    object: z.literal('payment_intent'),
    id: z.string().regex(/^pay_[a-z2-7]+$/),
    status: statusEnum,
    mode: modeEnum,
    currency: z.string(),
    requested_amount: z.string().nullable(),
    anm_amount: nanmString,
    anm_amount_formatted: z.string(),
    merchant_amount: nanmString,
    protocol_fee: nanmString,
    protocol_fee_bps: z.literal(200),
    merchant_order_id: z.string().nullable(),
    description: z.string().nullable(),
    payment_address: z.string(),
    payment_reference: z.string().regex(/^[a-z0-9]+:[a-z2-7]+$/),
    checkout_url: z.url(),
    transaction_hash: z.string().nullable(),
    confirmations: z.number().int().min(0),
    required_confirmations: z.number().int().min(1),
    metadata: z.record(z.string(), z.unknown()),
    created_at: dateTime,
    expires_at: dateTime,
    completed_at: dateTime,
  })
  .register(api, { id: 'PaymentIntent' });

export const PaymentIntentList = z
  .strictObject({ object: z.literal('list'), has_more: z.boolean(), data: z.array(PaymentIntent) })
  .register(api, { id: 'PaymentIntentList' });

const intString = (min: number, max: number) =>
  z
    .string()
    .regex(/^[0-9]{1,3}$/)
    .transform(Number)
    .refine((n) => n >= min && n <= max)
    .meta({ description: `Integer ${min}-${max}.` });

export const ListPaymentIntentsQuery = z.strictObject({
  limit: intString(1, LIMITS.listMax).optional(),
  status: z.string().optional().meta({ description: 'One of the 11 states; anything else is 400 invalid_status.' }),
  starting_after: z.string().optional().meta({ description: 'Intent id cursor: the page starts after it.' }),
  merchant_order_id: chars(LIMITS.merchant_order_id).optional(),
});

export const IntentIdParams = z.strictObject({ id: z.string() });

export const Balance = z
  .strictObject({
    object: z.literal('balance'),
    mode: modeEnum,
    currency: z.literal('ANM'),
    settled: nanmString,
    settled_formatted: z.string(),
    pending: nanmString,
    pending_formatted: z.string(),
    protocol_fees_paid: nanmString,
    payout_address: z.string().nullable(),
  })
  .register(api, { id: 'Balance' });

/** What a wallet needs to pay an intent (`GET /c/{id}/payment.json`, public). */
export const PaymentInstructions = z
  .strictObject({
    id: z.string(),
    status: statusEnum,
    network: modeEnum,
    payment_address: z.string(),
    treasury_address: z.string(),
    merchant_amount: nanmString,
    protocol_fee: nanmString,
    anm_amount: nanmString,
    payment_reference: z.string(),
    expires_at: dateTime,
  })
  .register(api, { id: 'PaymentInstructions' });
