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

export function depthReached(ctx: RefundContext, e: RefundEvent): boolean {
  if (e.type === 'chain.tx.included') return e.receipt === 'success' && confirmationsAt(e.block_height, e.head) >= ctx.required_confirmations;
  if (e.type === 'chain.block') return ctx.block_height !== null && confirmationsAt(ctx.block_height, e.head) >= ctx.required_confirmations;
  return false;
}

export function receiptFailed(e: RefundEvent): boolean {
  return e.type === 'chain.tx.included' && e.receipt === 'failed';
}

export function unsignedDue(ctx: RefundContext, e: RefundEvent): boolean {
  return e.type === 'timer.expired' && e.timer === 'unsigned';
}
