import { z } from 'zod';
import { codePoints } from '../kit/text.ts';
import { depthFields, positionField, reorgFields } from '../chain/signal-fields.ts';

/**
 * Events of the refund actor (DESIGN.md §4 "Refunds"). Chain signals have the same shape as
 * the payment intent's, produced by the indexer from the refund reference (`rf1:`).
 */
const nanm = z.string().regex(/^[0-9]+$/);
const positive = z.string().regex(/^[0-9]*[1-9][0-9]*$/);
const base = { id: z.string().min(1), at: z.number().int().nonnegative() };
const legs = { tx_hash: z.string().min(1), from: z.string().min(1), merchant_leg: nanm, fee_leg: nanm };

export const UNSIGNED_TTL_MS = 7 * 24 * 3600_000;
export const REFUND_CONFIRMATIONS = 12;

export const refundCreate = z.object({
  type: z.literal('refund.create'),
  ...base,
  refund_id: z.string().min(1),
  payment_intent: z.string().min(1),
  merchant_id: z.string().min(1),
  mode: z.enum(['live', 'test']),
  amount: positive,
  // 300 characters as the spec counts them (code points), not UTF-16 units.
  reason: z.string().refine((s) => codePoints(s) <= 300).nullable().default(null),
  chain_id: z.number().int(),
  /** The merchant's payout address: the refund is signed from there. */
  from: z.string().min(1),
  /** The paying transaction's sender. */
  to: z.string().min(1),
  reference: z.string().regex(/^rf1:[a-z2-7]+$/),
  nonce_hint: z.string().regex(/^[0-9]+$/).nullable().default(null),
  signing_payload: z.string().regex(/^[0-9a-f]*$/).nullable().default(null),
  metadata: z.record(z.string(), z.unknown()).default({}),
  required_confirmations: z.number().int().positive().default(REFUND_CONFIRMATIONS),
});

export const refundSubmitted = z.object({ type: z.literal('refund.submitted'), ...base, tx_hash: z.string().min(1) });
export const refundCancel = z.object({ type: z.literal('refund.cancel'), ...base });
export const refundSeen = z.object({ type: z.literal('chain.tx.seen'), ...base, ...legs, ...positionField });
export const refundIncluded = z.object({
  type: z.literal('chain.tx.included'),
  ...base,
  ...legs,
  block_height: z.number().int().nonnegative(),
  block_hash: z.string().min(1),
  receipt: z.enum(['success', 'failed']),
  head: z.number().int().nonnegative(),
  ...positionField,
});
export const refundBlock = z.object({ type: z.literal('chain.block'), ...base, head: z.number().int().nonnegative(), ...depthFields });
export const refundReorged = z.object({ type: z.literal('chain.reorged'), ...base, tx_hash: z.string().min(1), head: z.number().int().nonnegative(), ...reorgFields });
export const refundDropped = z.object({ type: z.literal('chain.tx.dropped'), ...base, tx_hash: z.string().min(1), ...positionField });
export const refundTimer = z.object({ type: z.literal('timer.expired'), ...base, timer: z.string().min(1), generation: z.number().int() });

export const refundEvents = z.discriminatedUnion('type', [
  refundCreate,
  refundSubmitted,
  refundCancel,
  refundSeen,
  refundIncluded,
  refundBlock,
  refundReorged,
  refundDropped,
  refundTimer,
]);

export type RefundEvent = z.infer<typeof refundEvents>;
export type RefundCreateEvent = z.infer<typeof refundCreate>;
