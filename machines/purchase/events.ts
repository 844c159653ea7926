import { z } from 'zod';
import { sellerOffer } from '../money/seller-offer.ts';
import { purchaseChainEvents } from './chain-events.ts';

/**
 * Events of the purchase actor (DESIGN §5 "Quote", "Purchase", "Purchase actor states").
 * Signatures and balances are checked by the runtime's lanes before `purchase.verify` is
 * sent; the machine checks that the legs are the quote's and keeps the order of settlement.
 */
const atomic = z.string().regex(/^[1-9][0-9]*$/);
const base = { id: z.string().min(1), at: z.number().int().nonnegative() };
const payee = z.object({ pay_to: z.string().min(1), amount: atomic });
const leg = z.object({
  pay_to: z.string().min(1),
  amount: atomic,
  payer: z.string().min(1),
  nonce: z.string().min(1),
  /** Unix milliseconds after which the leg can no longer settle. */
  valid_before: z.number().int().nonnegative(),
  /** The signed leg as the lane settles it (the EIP-3009 authorization and its signature). */
  payload: z.record(z.string(), z.unknown()),
  /** ANM lane: the hash of the signed transfer, which chain signals name. */
  tx_hash: z.string().regex(/^[0-9a-f]{64}$/).optional(),
});
export const LEGS = ['seller', 'fee'] as const;

export const purchaseQuote = z.object({
  type: z.literal('purchase.quote'),
  ...base,
  intent_id: z.string().regex(/^pi_[0-9a-z]+$/),
  resource_id: z.string().min(1),
  asset: z.enum(['USDC', 'ANM']),
  network: z.string().min(1),
  scheme: z.string().min(1),
  seller: payee,
  fee: payee,
  total: atomic,
  fee_bps: z.number().int(),
  /** Unix milliseconds. */
  expires_at: z.number().int().nonnegative(),
  /** ANM lane: confirmations at which a leg counts as settled (DESIGN §3: 12). */
  required_confirmations: z.number().int().positive().optional(),
  /** The seller's x402 version when quoted (the listing's last probe; absent: 2): which header `seller_payment` names (ADR 0080). */
  seller_x402_version: z.union([z.literal(1), z.literal(2)]).optional(),
  /**
   * The seller's own offer when quoted (the listing's last matching probe, ADR 0091): the seller
   * leg's requirements in `seller_payment` and the bound on its window. Absent: never probed
   * (the listing's payTo, the lane's defaults, no bound).
   */
  seller_offer: sellerOffer.optional(),
});
export const purchaseVerify = z.object({ type: z.literal('purchase.verify'), ...base, legs: z.object({ seller: leg, fee: leg }) });
/**
 * A settlement seen on the lane with a leg's nonce, and the transfer that used it: the leg counts
 * as settled only when that transfer is the leg's own (its payer, payee and amount), since any
 * other authorization with the same nonce uses it too (DESIGN §5 "The fee is taken only if the
 * seller is paid").
 */
export const legSettled = z.object({
  type: z.literal('leg.settled'),
  ...base,
  leg: z.enum(LEGS),
  tx: z.string().min(1),
  // EIP-3009 allows a zero value: such a transfer still uses the nonce.
  transfer: z.object({ from: z.string().min(1), to: z.string().min(1), value: z.string().regex(/^(0|[1-9][0-9]*)$/) }),
});
export const legFailed = z.object({ type: z.literal('leg.failed'), ...base, leg: z.enum(LEGS), reason: z.string().min(1) });
/**
 * Routed execution (DESIGN §5 "Routed execution"): the fee leg verified by the lane, and
 * `deadline_at` by which an answer must be recorded, else the call counts as failed.
 */
export const purchaseExecute = z.object({
  type: z.literal('purchase.execute'),
  ...base,
  fee: leg,
  deadline_at: z.number().int().nonnegative(),
  /** ANM lane: the hash of the seller transfer forwarded in the buyer's header, watched with the fee leg's. */
  seller_tx: z.string().regex(/^[0-9a-f]{64}$/).optional(),
});
/** The seller's HTTP status as the marketplace received it. */
/** `fee_tx`: the USDC fee's settlement, made by the statement that records this answer (ADR 0052). */
export const executeAnswered = z.object({ type: z.literal('execute.answered'), ...base, seller_status: z.number().int().min(100).max(599), fee_tx: z.string().min(1).optional() });
/** The seller could not be reached, timed out, or its answer was unusable. */
export const executeFailed = z.object({ type: z.literal('execute.failed'), ...base, reason: z.string().min(1) });
export const purchaseTimer = z.object({ type: z.literal('timer.expired'), ...base, timer: z.string().min(1), generation: z.number().int() });

export const purchaseEvents = z.discriminatedUnion('type', [purchaseQuote, purchaseVerify, purchaseExecute, executeAnswered, executeFailed, legSettled, legFailed, purchaseTimer, ...purchaseChainEvents]);

export type PurchaseEvent = z.infer<typeof purchaseEvents>;
export type PurchaseQuoteEvent = z.infer<typeof purchaseQuote>;
export type VerifiedLeg = z.infer<typeof leg>;
