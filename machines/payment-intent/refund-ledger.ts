import type { PaymentIntentContext, RefundRecord } from './context.ts';
import type { PaymentIntentEvent, RefundOutcomeEvent } from './events.ts';

/**
 * A refund's outcomes in any order (ADR 0033). The refund actor sends each outcome once,
 * numbered: `refund.confirmed` (its transfer is final: counted), `refund.reverted` (a deep
 * reorg took it back: held again, part of the cap still reserved), `refund.released`
 * (FAILED or CANCELED: neither). Two consumers may deliver them in either order, so the
 * intent applies an outcome only if it is newer than the last one it applied for that
 * refund, and each outcome says where the refund stands rather than what changed: applying
 * it moves the refund's record to that place, so nothing is counted twice or un-counted twice.
 */

const isOutcome = (e: PaymentIntentEvent): e is RefundOutcomeEvent =>
  e.type === 'refund.confirmed' || e.type === 'refund.reverted' || e.type === 'refund.released';

/** Outcomes without a number come from refunds older than numbering: their first and only one. */
const seqOf = (e: RefundOutcomeEvent): number => e.seq ?? 1;

const counted = (ctx: PaymentIntentContext, id: string): boolean => ctx.refunds.some((r) => r.refund_id === id);
const holding = (ctx: PaymentIntentContext, id: string): boolean => (ctx.refund_holds ?? []).some((r) => r.refund_id === id);

/**
 * Not newer than an outcome already applied for the same refund: dropped. A refund counted
 * without a number was counted by its first outcome; a hold without one has had none.
 */
export function staleOutcome(ctx: PaymentIntentContext, e: PaymentIntentEvent): boolean {
  if (!isOutcome(e)) return false;
  const mark = ctx.refund_marks?.[e.refund_id] ?? (counted(ctx, e.refund_id) ? 1 : 0);
  return seqOf(e) <= mark;
}

/** A newer outcome for a refund this intent counts: it may un-count it. */
export function countedOutcome(ctx: PaymentIntentContext, e: PaymentIntentEvent): boolean {
  return isOutcome(e) && !staleOutcome(ctx, e) && counted(ctx, e.refund_id);
}

/** A newer outcome for a refund this intent holds part of the cap for. */
export function heldOutcome(ctx: PaymentIntentContext, e: PaymentIntentEvent): boolean {
  return isOutcome(e) && !staleOutcome(ctx, e) && holding(ctx, e.refund_id);
}

/** The refund records once the outcome is applied: the refund sits where the outcome says, once. */
export function applyOutcome(ctx: PaymentIntentContext, e: PaymentIntentEvent): Partial<PaymentIntentContext> {
  if (!isOutcome(e)) return {};
  const record: RefundRecord = { refund_id: e.refund_id, amount: e.amount, at: e.at };
  const refunds = ctx.refunds.filter((r) => r.refund_id !== e.refund_id);
  const holds = (ctx.refund_holds ?? []).filter((r) => r.refund_id !== e.refund_id);
  const next: Partial<PaymentIntentContext> = {
    refunds: e.type === 'refund.confirmed' ? [...refunds, record] : refunds,
    refund_holds: e.type === 'refund.reverted' ? [...holds, record] : holds,
  };
  // Unnumbered outcomes (older refunds) leave no mark: nothing numbered came before them.
  if (e.seq !== undefined) next.refund_marks = { ...ctx.refund_marks, [e.refund_id]: e.seq };
  return next;
}
