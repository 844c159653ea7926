import { depthAhead, depthApplies, inclusionOf, newerStatus, notedHead, staleStatus, type KnownInclusion } from '../chain/signal-order.ts';
import type { RefundContext } from './context.ts';
import type { RefundEvent } from './events.ts';

/** Guards of the refund machine as pure functions. */
export const confirmationsAt = (height: number, head: number): number => Math.max(0, head - height + 1);

/** The refund transfer must pay the whole refund to the customer: anything less is not it. */
export function paysRefund(ctx: RefundContext, e: RefundEvent): boolean {
  return (e.type === 'chain.tx.seen' || e.type === 'chain.tx.included') && BigInt(e.merchant_leg) >= BigInt(ctx.amount);
}

export function sameTx(ctx: RefundContext, e: RefundEvent): boolean {
  return 'tx_hash' in e && ctx.tx_hash === e.tx_hash;
}

/** Confirmations an inclusion gives, counting a depth report for it that came first (ADR 0016). */
export function inclusionDepth(ctx: RefundContext, e: Extract<RefundEvent, { type: 'chain.tx.included' }>): number {
  const noted = notedHead(ctx.chain_depth, e.pos);
  return confirmationsAt(e.block_height, noted === null ? e.head : Math.max(e.head, noted));
}

const known = (ctx: RefundContext): KnownInclusion => inclusionOf({ block_height: ctx.block_height, pos: ctx.inclusion_pos });

/** A new head for the inclusion the refund knows (positional reports name it). */
export function depthApplicable(ctx: RefundContext, e: RefundEvent): boolean {
  return e.type === 'chain.block' && depthApplies(known(ctx), e);
}

/**
 * A depth report that deepens the known inclusion. A positional report older than one already
 * applied (a lower head) would take confirmations back: it moves nothing (ADR 0016).
 */
export function depthAdvances(ctx: RefundContext, e: RefundEvent): boolean {
  if (e.type !== 'chain.block' || !depthApplicable(ctx, e) || ctx.block_height === null) return false;
  return e.pos === undefined || confirmationsAt(ctx.block_height, e.head) > ctx.confirmations;
}

export function depthReached(ctx: RefundContext, e: RefundEvent): boolean {
  if (e.type === 'chain.tx.included') return e.receipt === 'success' && inclusionDepth(ctx, e) >= ctx.required_confirmations;
  if (e.type === 'chain.block') return depthApplicable(ctx, e) && ctx.block_height !== null && confirmationsAt(ctx.block_height, e.head) >= ctx.required_confirmations;
  return false;
}

type Status = Extract<RefundEvent, { type: 'chain.tx.seen' | 'chain.tx.included' | 'chain.reorged' | 'chain.tx.dropped' }>;
const isStatus = (e: RefundEvent): e is Status => e.type === 'chain.tx.seen' || e.type === 'chain.tx.included' || e.type === 'chain.reorged' || e.type === 'chain.tx.dropped';

/** Older than a statement already applied about the same transfer: dropped. */
export function staleSignal(ctx: RefundContext, e: RefundEvent): boolean {
  return isStatus(e) && staleStatus(ctx.chain_mark, e);
}

/** Positional news of the refund's transfer (or of any, while none is known) that moves nothing else: recorded. */
export function newsOfOurTx(ctx: RefundContext, e: RefundEvent): boolean {
  return isStatus(e) && (ctx.tx_hash === null || ctx.tx_hash === e.tx_hash) && newerStatus(ctx.chain_mark, e);
}

/**
 * The transfer, known in a block, seen in the mempool at a newer position than everything
 * applied: its block left the chain. The reorg that says so is older and, once this is
 * recorded, dropped as stale: the refund must leave the block here (ADR 0016).
 */
export function backInMempool(ctx: RefundContext, e: RefundEvent): boolean {
  return e.type === 'chain.tx.seen' && ctx.tx_hash !== null && newsOfOurTx(ctx, e) && ctx.block_height !== null;
}

/** The transfer dropped from the mempool at a newer position than everything applied (it left any block it was in first). */
export function droppedNews(ctx: RefundContext, e: RefundEvent): boolean {
  return e.type === 'chain.tx.dropped' && ctx.tx_hash !== null && newsOfOurTx(ctx, e);
}

/** A redelivery of the inclusion the refund knows (same position): it moves nothing, not even the depth back. */
export function knownInclusion(ctx: RefundContext, e: RefundEvent): boolean {
  return e.type === 'chain.tx.included' && e.pos !== undefined && ctx.inclusion_pos === e.pos && ctx.tx_hash === e.tx_hash;
}

/** A depth report for an inclusion not heard of yet: kept until it arrives. */
export function depthForLater(ctx: RefundContext, e: RefundEvent): boolean {
  return e.type === 'chain.block' && depthAhead(known(ctx), ctx.chain_depth, e);
}

export function receiptFailed(e: RefundEvent): boolean {
  return e.type === 'chain.tx.included' && e.receipt === 'failed';
}

export function unsignedDue(ctx: RefundContext, e: RefundEvent): boolean {
  return e.type === 'timer.expired' && e.timer === 'unsigned';
}

/**
 * Outcomes already sent to the intent. Version 2 snapshots do not count them: a refund that
 * completed then had sent exactly one (`refund.confirmed`), any other live refund none.
 */
export function outcomesSent(ctx: RefundContext): number {
  return ctx.outcomes_sent ?? (ctx.completed_at !== null ? 1 : 0);
}

/**
 * A newer inclusion of the confirmed transfer in another block: the block it confirmed in
 * left the chain (ADR 0033). The same block applied again at a newer position (an indexer
 * restart) is not a move; version 2 snapshots know only the height.
 */
export function movedInclusion(ctx: RefundContext, e: RefundEvent): boolean {
  if (e.type !== 'chain.tx.included' || ctx.tx_hash !== e.tx_hash || !newsOfOurTx(ctx, e)) return false;
  return ctx.block_hash != null ? e.block_hash !== ctx.block_hash : e.block_height !== ctx.block_height;
}
