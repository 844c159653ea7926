import { depthAhead, depthApplies, inclusionOf, newerStatus, noteDepth, notedHead, noteStatus, staleStatus } from '../chain/signal-order.ts';
import type { PaymentIntentContext } from './context.ts';
import type { PaymentIntentEvent, TxLegsEvent } from './events.ts';
import { heldOutcome, staleOutcome } from './refund-ledger.ts';

/**
 * Domain rules of a payment intent as pure functions of (context, event). The machine's
 * guards are these functions by name; tests and the docs refer to the same names.
 */

/** How long a re-opened intent stays payable at least (DESIGN §4: default expiry 30 min). */
export const REOPEN_GRACE_MS = 30 * 60 * 1000;

export const SETTLED_STATES = ['PAID', 'PARTIALLY_REFUNDED', 'REFUNDED'] as const;

type Legs = Pick<TxLegsEvent, 'merchant_leg' | 'fee_leg'>;
export type LegsVerdict = 'exact' | 'short' | 'over';

function hasLegs(e: PaymentIntentEvent): e is TxLegsEvent {
  return e.type === 'chain.tx.seen' || e.type === 'chain.tx.included';
}

/**
 * Both legs must cover their share: a transaction that pays the merchant in full but skips the
 * fee does not satisfy the intent. Over = both covered and at least one above.
 */
export function legsVerdict(ctx: PaymentIntentContext, legs: Legs): LegsVerdict {
  const m = BigInt(legs.merchant_leg) - BigInt(ctx.merchant_amount);
  const f = BigInt(legs.fee_leg) - BigInt(ctx.protocol_fee);
  if (m < 0n || f < 0n) return 'short';
  return m === 0n && f === 0n ? 'exact' : 'over';
}

/** Sum of what each leg lacks; a surplus on one leg does not pay for the other. */
export function shortfall(ctx: PaymentIntentContext, legs: Legs): bigint {
  const m = BigInt(ctx.merchant_amount) - BigInt(legs.merchant_leg);
  const f = BigInt(ctx.protocol_fee) - BigInt(legs.fee_leg);
  return (m > 0n ? m : 0n) + (f > 0n ? f : 0n);
}

/** Total paid above anm_amount by a transaction whose legs both cover their share. */
export function excessOf(ctx: PaymentIntentContext, legs: Legs): bigint {
  if (legsVerdict(ctx, legs) !== 'over') return 0n;
  return BigInt(legs.merchant_leg) + BigInt(legs.fee_leg) - BigInt(ctx.anm_amount);
}

export const legsExact = (ctx: PaymentIntentContext, e: PaymentIntentEvent): boolean => hasLegs(e) && legsVerdict(ctx, e) === 'exact';
export const legsShort = (ctx: PaymentIntentContext, e: PaymentIntentEvent): boolean => hasLegs(e) && legsVerdict(ctx, e) === 'short';
export const legsOver = (ctx: PaymentIntentContext, e: PaymentIntentEvent): boolean => hasLegs(e) && legsVerdict(ctx, e) === 'over';

export function confirmationsAt(blockHeight: number, head: number): number {
  return head >= blockHeight ? head - blockHeight + 1 : 0;
}

/** Depth an event implies for the matched tx (inclusion or a new head), or null if none. */
function depthOf(ctx: PaymentIntentContext, e: PaymentIntentEvent): number | null {
  if (e.type === 'chain.tx.included') {
    if (e.receipt !== 'success') return null;
    // A depth report for this inclusion may have arrived first (ADR 0016).
    const noted = notedHead(ctx.chain_depth, e.pos);
    return confirmationsAt(e.block_height, noted === null ? e.head : Math.max(e.head, noted));
  }
  if (e.type === 'chain.block' && ctx.tx?.block_height != null && ctx.tx.receipt === 'success' && depthApplies(inclusionOf(ctx.tx), e)) {
    return confirmationsAt(ctx.tx.block_height, e.head);
  }
  return null;
}

/** Confirmations the matched tx has once `e` (an inclusion) is applied. */
export function inclusionDepth(ctx: PaymentIntentContext, e: PaymentIntentEvent): number {
  const d = depthOf(ctx, e) ?? 0;
  // The same block reported again at a later position: depth never goes back.
  return e.type === 'chain.tx.included' && ctx.tx?.block_hash === e.block_hash ? Math.max(d, ctx.confirmations) : d;
}

/** Spec rule 7: settlement needs a successful receipt at the required depth, nothing less. */
export function depthReached(ctx: PaymentIntentContext, e: PaymentIntentEvent): boolean {
  const d = depthOf(ctx, e);
  return d !== null && d >= ctx.required_confirmations;
}

/** A new head deepens the matched tx; shallower heads are left to the reorg signal. */
export function depthAdvances(ctx: PaymentIntentContext, e: PaymentIntentEvent): boolean {
  const d = depthOf(ctx, e);
  return e.type === 'chain.block' && d !== null && d > ctx.confirmations && ctx.confirmations < ctx.required_confirmations;
}

export function receiptFailed(_ctx: PaymentIntentContext, e: PaymentIntentEvent): boolean {
  return e.type === 'chain.tx.included' && e.receipt === 'failed';
}

/** The event names the matched transaction. */
export function sameTx(ctx: PaymentIntentContext, e: PaymentIntentEvent): boolean {
  return 'tx_hash' in e && ctx.tx !== null && ctx.tx.hash === e.tx_hash;
}

/** One tx per intent (spec rule 6): once matched, other transactions are not ours. */
export function otherTx(ctx: PaymentIntentContext, e: PaymentIntentEvent): boolean {
  return 'tx_hash' in e && !sameTx(ctx, e);
}

/** An inclusion we already know: a duplicate signal, not a new fact. */
export function knownInclusion(ctx: PaymentIntentContext, e: PaymentIntentEvent): boolean {
  return (
    e.type === 'chain.tx.included' &&
    sameTx(ctx, e) &&
    ctx.tx?.block_hash === e.block_hash &&
    ctx.tx.receipt === e.receipt &&
    (depthOf(ctx, e) ?? 0) <= ctx.confirmations &&
    !newerStatus(ctx.chain_mark, e)
  );
}

/** The matched tx landed in a new block, or its known block got deeper. */
export function inclusionNews(ctx: PaymentIntentContext, e: PaymentIntentEvent): boolean {
  return e.type === 'chain.tx.included' && sameTx(ctx, e) && !knownInclusion(ctx, e);
}

/** Chain signals in any order (ADR 0016): guards over the indexer's positions. */
function isStatus(e: PaymentIntentEvent): e is Extract<PaymentIntentEvent, { type: 'chain.tx.seen' | 'chain.tx.included' | 'chain.reorged' | 'chain.tx.dropped' }> {
  return e.type === 'chain.tx.seen' || e.type === 'chain.tx.included' || e.type === 'chain.reorged' || e.type === 'chain.tx.dropped';
}

/** Older than a statement already applied about the same transaction: dropped. */
export function staleSignal(ctx: PaymentIntentContext, e: PaymentIntentEvent): boolean {
  return isStatus(e) && staleStatus(ctx.chain_mark, e);
}

/** A positional statement about the matched tx (or any, while none is matched) newer than all applied. */
export function newsOfOurTx(ctx: PaymentIntentContext, e: PaymentIntentEvent): boolean {
  return isStatus(e) && (ctx.tx === null || ctx.tx.hash === e.tx_hash) && newerStatus(ctx.chain_mark, e);
}

/** The matched tx, settled or deepening, is now in a different block: its old block left the chain. */
export function movedBlock(ctx: PaymentIntentContext, e: PaymentIntentEvent): boolean {
  return e.type === 'chain.tx.included' && newsOfOurTx(ctx, e) && ctx.tx !== null && ctx.tx.block_hash !== null && ctx.tx.block_hash !== e.block_hash;
}

/**
 * The matched tx, known in a block, stated pending (seen in the mempool) at a newer position
 * than everything applied: the block left the chain and the transaction is back in the
 * mempool. The reorg signal that says so may still be on its way, and it is older than this
 * statement, so once this one is recorded it will be dropped as stale: the intent must
 * leave the block here (ADR 0016).
 */
export function backInMempool(ctx: PaymentIntentContext, e: PaymentIntentEvent): boolean {
  return e.type === 'chain.tx.seen' && newsOfOurTx(ctx, e) && ctx.tx !== null && ctx.tx.block_hash !== null;
}

/** A positional loss (reorg or drop) of the matched tx. Signals without a position keep the plain same-tx rule. */
export function lostTx(ctx: PaymentIntentContext, e: PaymentIntentEvent): boolean {
  return (e.type === 'chain.reorged' || e.type === 'chain.tx.dropped') && sameTx(ctx, e) && !staleSignal(ctx, e);
}

/**
 * A settled tx keeps following its depth from positional reports, so that the confirmations
 * an intent shows are the chain's whatever order the reports came in.
 */
export function settledDeeper(ctx: PaymentIntentContext, e: PaymentIntentEvent): boolean {
  return e.type === 'chain.block' && e.pos !== undefined && (depthOf(ctx, e) ?? 0) > ctx.confirmations;
}

/** A depth report for an inclusion the intent has not heard of yet: kept until it arrives. */
export function depthForLater(ctx: PaymentIntentContext, e: PaymentIntentEvent): boolean {
  return e.type === 'chain.block' && depthAhead(inclusionOf(ctx.tx), ctx.chain_depth, e);
}

/** What the context records of a chain signal that moves nothing else: its position, and a renewed inclusion's. */
export function chainNotes(ctx: PaymentIntentContext, e: PaymentIntentEvent): Partial<PaymentIntentContext> {
  if (e.type === 'chain.block') return { chain_depth: noteDepth(ctx.chain_depth, e) };
  if (!isStatus(e)) return {};
  const renewed = e.type === 'chain.tx.included' && ctx.tx?.hash === e.tx_hash && ctx.tx.block_hash === e.block_hash;
  return { chain_mark: noteStatus(ctx.chain_mark, e), ...(renewed && ctx.tx && { tx: { ...ctx.tx, pos: e.pos ?? ctx.tx.pos ?? null } }) };
}

/** End of the late-payment watch: from expiry (or the deadline, if never expired) plus the window. */
export function watchUntil(ctx: PaymentIntentContext): number {
  return (ctx.expired_at ?? ctx.expires_at) + ctx.monitor_window_ms;
}

export function withinMonitoringWindow(ctx: PaymentIntentContext, e: PaymentIntentEvent): boolean {
  return e.at <= watchUntil(ctx);
}

/** The runtime drops stale generations; the deadline check also makes an early firing harmless. */
export function expiryDue(ctx: PaymentIntentContext, e: PaymentIntentEvent): boolean {
  return e.type === 'timer.expired' && e.timer === 'expiry' && e.at >= ctx.expires_at;
}

/** Deadline after a reorg or drop re-opens the intent: never earlier than the original. */
export function reopenedDeadline(ctx: PaymentIntentContext, at: number): number {
  return Math.max(ctx.expires_at, at + REOPEN_GRACE_MS);
}

/** What the merchant received and may send back: merchant_amount plus its leg's excess. */
export function refundCap(ctx: PaymentIntentContext): bigint {
  const received = ctx.tx ? BigInt(ctx.tx.merchant_leg) : 0n;
  const base = BigInt(ctx.merchant_amount);
  return received > base ? received : base;
}

export function refunded(ctx: PaymentIntentContext): bigint {
  return ctx.refunds.reduce((sum, r) => sum + BigInt(r.amount), 0n);
}

export function held(ctx: PaymentIntentContext): bigint {
  return (ctx.refund_holds ?? []).reduce((sum, r) => sum + BigInt(r.amount), 0n);
}

/** Remaining refundable amount: cap − confirmed refunds − refunds still in flight. */
export function refundRemaining(ctx: PaymentIntentContext): bigint {
  return refundCap(ctx) - refunded(ctx) - held(ctx);
}

export function reserveFits(ctx: PaymentIntentContext, e: PaymentIntentEvent): boolean {
  if (e.type !== 'refund.reserve') return false;
  const known = ctx.refunds.some((r) => r.refund_id === e.refund_id) || (ctx.refund_holds ?? []).some((r) => r.refund_id === e.refund_id);
  const amount = BigInt(e.amount);
  return !known && amount > 0n && amount <= refundRemaining(ctx);
}

export function holdExists(ctx: PaymentIntentContext, e: PaymentIntentEvent): boolean {
  return e.type === 'refund.released' && heldOutcome(ctx, e);
}

/** Invariant refunded <= cap; a refund id counts once; an outcome older than one applied is dropped (ADR 0033). */
export function refundWithinCap(ctx: PaymentIntentContext, e: PaymentIntentEvent): boolean {
  if (e.type !== 'refund.confirmed' || ctx.refunds.some((r) => r.refund_id === e.refund_id) || staleOutcome(ctx, e)) return false;
  const amount = BigInt(e.amount);
  return amount > 0n && refunded(ctx) + amount <= refundCap(ctx);
}

export function refundCompletes(ctx: PaymentIntentContext, e: PaymentIntentEvent): boolean {
  return refundWithinCap(ctx, e) && e.type === 'refund.confirmed' && refunded(ctx) + BigInt(e.amount) === refundCap(ctx);
}

/**
 * The confirmation of a refund this intent reserved (it holds part of the cap) and has not
 * counted yet. Its transfer is on the chain whatever became of the payment meanwhile (a reorg
 * may have reopened the intent), and the refund actor says so once: every state records it
 * (ADR 0023). Without the hold no refund of this intent was ever created.
 */
export function refundNews(ctx: PaymentIntentContext, e: PaymentIntentEvent): boolean {
  return (
    e.type === 'refund.confirmed' &&
    heldOutcome(ctx, e) &&
    !ctx.refunds.some((r) => r.refund_id === e.refund_id)
  );
}

/** A payment that settles (again) with refunds already on record is refunded in part or in full. */
export function refundsCoverCap(ctx: PaymentIntentContext): boolean {
  return ctx.refunds.length > 0 && refunded(ctx) >= refundCap(ctx);
}

export function refundsRecorded(ctx: PaymentIntentContext): boolean {
  return ctx.refunds.length > 0;
}

/** The settled status the recorded refunds imply (DESIGN §4: REFUNDED when their sum reaches the cap). */
export function settledStatus(ctx: PaymentIntentContext): 'PAID' | 'PARTIALLY_REFUNDED' | 'REFUNDED' {
  return refundsCoverCap(ctx) ? 'REFUNDED' : refundsRecorded(ctx) ? 'PARTIALLY_REFUNDED' : 'PAID';
}

/** Webhook reasons (spec: present on underpaid, overpaid and reorged transitions). */
export function underpaidReason(ctx: PaymentIntentContext, legs: Legs): string {
  return `underpaid by ${shortfall(ctx, legs)} nANM`;
}

export function overpaidReason(ctx: PaymentIntentContext): string | null {
  return BigInt(ctx.excess) > 0n ? `overpaid by ${ctx.excess} nANM` : null;
}

export function reorgedReason(ctx: PaymentIntentContext, head: number | null): string {
  const h = ctx.tx?.block_height;
  return `block ${h ?? '?'} holding transaction ${ctx.tx?.hash ?? '?'} was removed by a reorg${head === null ? '' : ` (head ${head})`}`;
}
