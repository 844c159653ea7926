/** Refund shapes of the HTTP interface (spec "CreateRefundRequest", "Refund"). */
import { z } from 'zod';
import { api, chars } from './registry.ts';

const nanm = z.string().regex(/^[0-9]+$/);
const dateTime = z.iso.datetime().nullable();

export const CreateRefundRequest = z
  .strictObject({
    payment_intent: z.string().meta({ description: 'pay_ id; must be PAID or PARTIALLY_REFUNDED.' }),
    amount: z.string().optional().meta({ description: 'Decimal ANM, at most 9 decimals.' }),
    amount_nanm: nanm.optional(),
    reason: chars(300).optional(),
  })
  .register(api, { id: 'CreateRefundRequest' });

export const SubmitRefundRequest = z.strictObject({ signed_transaction: z.string().regex(/^[0-9a-f]+$/) }).register(api, { id: 'SubmitRefundRequest' });

export const UnsignedTransfer = z
  .strictObject({
    chain_id: z.number().int(),
    from: z.string().meta({ description: 'The payout address the refund is signed from.' }),
    to: z.string().meta({ description: "The paying transaction's sender." }),
    amount: nanm,
    reference: z.string().meta({ description: 'rf1:… committed in the signed bytes; the indexer matches it.' }),
    nonce_hint: nanm.nullable(),
    signing_payload: z.string().nullable().meta({ description: 'Hex of the ANM-TX-v1 signing bytes, without the public key.' }),
  })
  .register(api, { id: 'UnsignedTransfer' });

export const Refund = z
  .strictObject({
    object: z.literal('refund'),
    id: z.string(),
    payment_intent: z.string().nullable(),
    status: z.enum(['REQUIRES_SIGNATURE', 'SUBMITTED', 'CONFIRMING', 'CONFIRMED', 'FAILED', 'CANCELED']),
    amount: nanm,
    amount_formatted: z.string(),
    reason: z.string().nullable(),
    requires_merchant_signature: z.boolean(),
    unsigned_transfer: UnsignedTransfer.nullable(),
    transaction_hash: z.string().nullable(),
    confirmations: z.number().int(),
    mode: z.enum(['live', 'test']),
    created_at: dateTime,
    completed_at: dateTime,
  })
  .register(api, { id: 'Refund' });

export const SetPayoutResult = z.strictObject({ merchant: z.string(), mode: z.enum(['live', 'test']), payout_address: z.string() }).register(api, { id: 'PayoutAddress' });
