import { z } from 'zod';
import { depthFields, positionField, reorgFields } from '../chain/signal-fields.ts';

/**
 * Every event the payment-intent actor accepts. The runtime validates with
 * `paymentIntentEvents` before its transaction, so the machine only ever sees these shapes.
 * Amounts are nANM decimal strings (spec rule 2): bigints do not survive JSON.
 */

export const DEFAULT_REQUIRED_CONFIRMATIONS = 12;
export const DEFAULT_MONITOR_WINDOW_MS = 24 * 60 * 60 * 1000;

const nanmString = z.string().regex(/^[0-9]+$/, 'nANM decimal string');
const positiveNanm = z.string().regex(/^[0-9]*[1-9][0-9]*$/, 'nANM decimal string greater than zero');
const unixMs = z.number().int().nonnegative();
const nonEmpty = z.string().min(1);

/** Engine envelope: a dedupe id and the time the fact happened. */
const base = { id: nonEmpty, at: unixMs };

/** What one transaction pays to the intent's payment address and to the treasury. */
const txLegs = { tx_hash: nonEmpty, from: nonEmpty, merchant_leg: nanmString, fee_leg: nanmString };

export const quoteSchema = z.object({ rate: z.string().regex(/^[0-9]+(\.[0-9]+)?$/), source: nonEmpty, at: unixMs });

export const intentCreate = z.object({
  type: z.literal('intent.create'),
  ...base,
  intent_id: nonEmpty,
  merchant_id: nonEmpty,
  mode: z.enum(['live', 'test']),
  currency: nonEmpty,
  requested_amount: z.string().nullable(),
  anm_amount: positiveNanm,
  merchant_order_id: z.string().nullable().default(null),
  description: z.string().nullable().default(null),
  metadata: z.record(z.string(), z.unknown()).default({}),
  success_url: z.string().nullable().default(null),
  cancel_url: z.string().nullable().default(null),
  payment_address: nonEmpty,
  treasury_address: nonEmpty,
  payment_reference: nonEmpty,
  expires_at: unixMs,
  required_confirmations: z.number().int().positive().default(DEFAULT_REQUIRED_CONFIRMATIONS),
  monitor_window_ms: z.number().int().nonnegative().default(DEFAULT_MONITOR_WINDOW_MS),
  quote: quoteSchema.nullable().default(null),
  /** The actor the intent was made for (an invoice), told when it settles and when a reorg reverses that; set by the service, never by a request. */
  owner: z.object({ kind: nonEmpty, id: nonEmpty }).optional(),
});

export const intentCancel = z.object({ type: z.literal('intent.cancel'), ...base });

export const txSeen = z.object({ type: z.literal('chain.tx.seen'), ...base, ...txLegs, ...positionField });

export const txIncluded = z.object({
  type: z.literal('chain.tx.included'),
  ...base,
  ...txLegs,
  block_height: z.number().int().nonnegative(),
  block_hash: nonEmpty,
  receipt: z.enum(['success', 'failed']),
  /** Chain head when the signal was produced; confirmations = head - block_height + 1. */
  head: z.number().int().nonnegative(),
  ...positionField,
});

export const txDropped = z.object({ type: z.literal('chain.tx.dropped'), ...base, tx_hash: nonEmpty, ...positionField });

export const chainBlock = z.object({ type: z.literal('chain.block'), ...base, head: z.number().int().nonnegative(), ...depthFields });

/** The block holding `tx_hash` left the canonical chain. */
export const chainReorged = z.object({ type: z.literal('chain.reorged'), ...base, tx_hash: nonEmpty, head: z.number().int().nonnegative(), ...reorgFields });

export const timerExpired = z.object({ type: z.literal('timer.expired'), ...base, timer: nonEmpty, generation: z.number().int() });

/**
 * A refund's outcomes carry the refund actor's count `seq` (ADR 0033): two consumers may
 * deliver a confirmation and the reversal after it in either order, and the newest wins.
 * Refunds older than numbering send none; theirs was their first and only one (`seq` 1).
 */
const outcomeSeq = { seq: z.number().int().positive().optional() };

export const refundConfirmed = z.object({ type: z.literal('refund.confirmed'), ...base, refund_id: nonEmpty, amount: positiveNanm, ...outcomeSeq });

/** The chain took a confirmed refund's transfer back: un-counted, it holds its part of the cap again. */
export const refundReverted = z.object({ type: z.literal('refund.reverted'), ...base, refund_id: nonEmpty, amount: positiveNanm, seq: z.number().int().positive() });

/**
 * A refund asks for part of the cap. Accepted only while the remainder covers it; the intent
 * then creates the refund actor through the outbox (`refund_create` is that actor's create
 * event), so a reservation never exists without its refund.
 */
export const refundReserve = z.object({
  type: z.literal('refund.reserve'),
  ...base,
  refund_id: nonEmpty,
  amount: positiveNanm,
  refund_create: z.record(z.string(), z.unknown()).and(z.object({ type: z.literal('refund.create'), id: nonEmpty, at: unixMs })),
});

/** A refund that FAILED or was CANCELED gives its amount back to the remainder. */
export const refundReleased = z.object({ type: z.literal('refund.released'), ...base, refund_id: nonEmpty, amount: positiveNanm, ...outcomeSeq });

export const paymentIntentEvents = z.discriminatedUnion('type', [
  refundReserve,
  refundReleased,
  intentCreate,
  intentCancel,
  txSeen,
  txIncluded,
  txDropped,
  chainBlock,
  chainReorged,
  timerExpired,
  refundConfirmed,
  refundReverted,
]);

export type IntentCreateEvent = z.infer<typeof intentCreate>;
export type IntentCancelEvent = z.infer<typeof intentCancel>;
export type TxSeenEvent = z.infer<typeof txSeen>;
export type TxIncludedEvent = z.infer<typeof txIncluded>;
export type TxDroppedEvent = z.infer<typeof txDropped>;
export type ChainBlockEvent = z.infer<typeof chainBlock>;
export type ChainReorgedEvent = z.infer<typeof chainReorged>;
export type TimerExpiredEvent = z.infer<typeof timerExpired>;
export type RefundConfirmedEvent = z.infer<typeof refundConfirmed>;
export type RefundOutcomeEvent = z.infer<typeof refundConfirmed> | z.infer<typeof refundReverted> | z.infer<typeof refundReleased>;
export type RefundReserveEvent = z.infer<typeof refundReserve>;
export type PaymentIntentEvent = z.infer<typeof paymentIntentEvents>;
export type Quote = z.infer<typeof quoteSchema>;

/** Events that name a transaction and what it pays. */
export type TxLegsEvent = TxSeenEvent | TxIncludedEvent;
