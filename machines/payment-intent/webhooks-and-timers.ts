/**
 * What a payment intent's transitions send out, as effect actions: one webhook per public
 * status change, each carrying the state the intent is in once the step's context is
 * assigned, and the expiry timer of AWAITING_PAYMENT.
 */
import type { PaymentIntentContext } from './context.ts';
import type { PaymentIntentEvent } from './events.ts';
import * as rules from './rules.ts';
import { webhookData, type PaymentIntentStatus } from './view.ts';

type Ctx = PaymentIntentContext;
type Reason = (ctx: Ctx, e: PaymentIntentEvent) => string | null;

/** Every webhook carries the state the intent is in once this step's context is assigned. */
function webhook(type: string, status: PaymentIntentStatus | ((ctx: Ctx) => PaymentIntentStatus), reason?: Reason) {
  return {
    type: 'emitWebhook' as const,
    params: ({ context, event }: { context: Ctx; event: PaymentIntentEvent }) => ({
      type,
      created: event.at,
      data: webhookData(context, typeof status === 'function' ? status(context) : status, { reason: reason ? reason(context, event) : null }),
    }),
  };
}

export const scheduleExpiry = {
  type: 'scheduleTimer' as const,
  params: ({ context }: { context: Ctx }) => ({ name: 'expiry', at: context.expires_at, event: 'timer.expired' }),
};
export const cancelExpiry = { type: 'cancelTimer' as const, params: { name: 'expiry' } };

export const created = webhook('payment.created', 'AWAITING_PAYMENT');
export const detected = webhook('payment.detected', 'PAYMENT_DETECTED');
export const confirming = webhook('payment.confirming', 'CONFIRMING');
// A payment settling again after a reorg lands where its recorded refunds put it (machine.ts, PAID).
export const confirmed = webhook('payment.confirmed', (ctx) => rules.settledStatus(ctx), (ctx) => rules.overpaidReason(ctx));
export const failed = webhook('payment.failed', 'FAILED');
export const underpaid = webhook('payment.underpaid', 'UNDERPAID', (ctx) => (ctx.tx ? rules.underpaidReason(ctx, ctx.tx) : null));
export const overpaid = webhook('payment.overpaid', 'OVERPAID', (ctx) => rules.overpaidReason(ctx));
export const expired = webhook('payment.expired', 'EXPIRED');
export const canceled = webhook('payment.expired', 'EXPIRED', () => 'canceled');
// Emitted before the tx is cleared so the merchant learns which settlement was reversed.
export const reorged = {
  type: 'emitWebhook' as const,
  params: ({ context, event }: { context: Ctx; event: PaymentIntentEvent }) => ({
    type: 'payment.reorged',
    created: event.at,
    data: webhookData(context, 'AWAITING_PAYMENT', {
      reason: rules.reorgedReason(context, 'head' in event ? event.head : null),
      confirmations: 0,
    }),
  }),
};


/**
 * Tells the intent's owner (an invoice) that it settled, or that a reorg reversed the
 * settlement. The id names this step of this intent, so a re-settlement is news again; with no
 * owner the target id is empty and no effect is made (machines/kit/effects.ts).
 */
function toOwner(type: 'intent.paid' | 'intent.reorged') {
  return {
    type: 'sendTo' as const,
    params: ({ context, event }: { context: Ctx; event: PaymentIntentEvent }) => ({
      kind: context.owner?.kind ?? '',
      actorId: context.owner?.id ?? '',
      // The chain signal's position orders the notices: a late reorg notice never undoes a newer settlement.
      event: { type, id: `${type}:${context.intent_id}:${event.id}`, at: event.at, intent_id: context.intent_id, ...('pos' in event && event.pos !== undefined ? { pos: event.pos } : {}) },
    }),
  };
}
export const ownerPaid = toOwner('intent.paid');
export const ownerReorged = toOwner('intent.reorged');
