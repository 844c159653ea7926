import { not, or } from 'xstate';
import { contextFrom } from '../kit/durable.ts';
import { initialContext } from './context.ts';
import type { PaymentIntentEvent } from './events.ts';
import { inFlight, keepDepth, newTx, noteNews, reopenOnLoss, reseen, settledChain } from './chain-transitions.ts';
import { pi } from './setup.ts';
import { cancelExpiry, canceled, created, expired, failed, scheduleExpiry } from './webhooks-and-timers.ts';

/**
 * The payment intent as a durable actor (DESIGN §4 "Payment intent transitions"). Chain
 * signals, timers and commands arrive as events; webhooks and timers leave as effect actions
 * (webhooks-and-timers.ts). This file is the chart; setup.ts names its actions and guards,
 * chain-transitions.ts holds the answers to chain signals the states share.
 *
 * A transition written as `{ guard: X }` with no target and no actions is a deliberate
 * blocker: it swallows the event before later branches see it, so the kit reports it as
 * not accepted (one tx per intent, late-payment window, duplicate signals).
 */

const refunds = [
  { guard: 'refundCompletes' as const, target: 'REFUNDED', actions: ['recordRefund' as const] },
  { guard: 'refundWithinCap' as const, target: 'PARTIALLY_REFUNDED', actions: ['recordRefund' as const] },
];
/** Reserve part of the cap and create the refund actor through the outbox, in one step. */
const createRefund = {
  type: 'sendTo' as const,
  params: ({ event }: { event: PaymentIntentEvent }) => {
    if (event.type !== 'refund.reserve') throw new TypeError('createRefund runs on refund.reserve');
    return { kind: 'refund', actorId: event.refund_id, event: event.refund_create };
  },
};
/** A newer outcome of a refund already on record (counted or held) puts it where it says (ADR 0033). */
const refundRecorded = { guard: or(['countedOutcome', 'heldOutcome']), actions: ['recordRefund' as const] };
/**
 * A counted refund reverted (its transfer reorged out) or released (then FAILED or CANCELED)
 * is un-counted, and a settled payment takes the status its remaining refunds give (PAID's
 * eventless moves, ADR 0033).
 */
const uncount = [{ guard: 'countedOutcome' as const, target: 'PAID', actions: ['recordRefund' as const] }, refundRecorded];
const refundHolds = {
  'refund.reserve': { guard: 'reserveFits' as const, actions: ['holdRefund' as const, createRefund] },
  'refund.released': uncount,
  'refund.reverted': uncount,
};
/**
 * Outside PAID and PARTIALLY_REFUNDED (a reorg reopened the payment, or it is REFUNDED) a
 * refund's outcome is still recorded: the refund actor sends it once, and its transfer is on
 * the chain (or its hold is over) whatever the payment's state (ADR 0023).
 */
const refundOutcomes = {
  'refund.confirmed': refundRecorded,
  'refund.released': refundRecorded,
  'refund.reverted': refundRecorded,
};

export const paymentIntentMachine = pi.createMachine({
  id: 'payment_intent',
  initial: 'CREATED',
  context: contextFrom(initialContext),
  states: {
    CREATED: {
      on: {
        'intent.create': { target: 'AWAITING_PAYMENT', actions: [created, scheduleExpiry] },
        'intent.cancel': { target: 'EXPIRED', actions: [cancelExpiry, 'markExpired', canceled] },
      },
    },
    AWAITING_PAYMENT: {
      // The deadline governs only this state: leaving it by any route retires the timer.
      exit: [cancelExpiry],
      on: {
        'intent.cancel': { target: 'EXPIRED', actions: ['markExpired', canceled] },
        'timer.expired': { guard: 'expiryDue', target: 'EXPIRED', actions: ['markExpired', expired] },
        ...newTx.on,
        'chain.reorged': noteNews,
        'chain.tx.dropped': noteNews,
        'chain.block': keepDepth,
        ...refundOutcomes,
      },
    },
    PAYMENT_DETECTED: {
      on: {
        // Seen again at a newer position (back in the mempool after a reorg): recorded, so the older reorg is dropped.
        'chain.tx.seen': noteNews,
        'chain.tx.included': [{ guard: 'otherTx' }, ...newTx.on['chain.tx.included']],
        'chain.reorged': reopenOnLoss,
        'chain.tx.dropped': reopenOnLoss,
        'chain.block': keepDepth,
        ...refundOutcomes,
      },
    },
    CONFIRMING: { on: { ...inFlight.on, ...refundOutcomes } },
    OVERPAID: { on: { ...inFlight.on, ...refundOutcomes } },
    UNDERPAID: {
      // Terminal for matching (one tx per intent); only the tx's own fate still moves it.
      on: {
        'chain.tx.included': [
          { guard: or(['otherTx', 'staleSignal']) },
          { guard: 'receiptFailed', target: 'FAILED', actions: ['matchTx', failed] },
          { guard: 'inclusionNews', actions: ['matchTx'] },
        ],
        'chain.tx.seen': reseen,
        'chain.block': [{ guard: 'depthAdvances', actions: ['trackDepth'] }, keepDepth],
        'chain.reorged': reopenOnLoss,
        'chain.tx.dropped': reopenOnLoss,
        ...refundOutcomes,
      },
    },
    PAID: {
      // Settling again after a reorg, with refunds recorded meanwhile or before: the status says what was refunded.
      always: [
        { guard: 'refundsCoverCap', target: 'REFUNDED' },
        { guard: 'refundsRecorded', target: 'PARTIALLY_REFUNDED' },
      ],
      on: { ...settledChain, 'refund.confirmed': [...refunds, refundRecorded], ...refundHolds },
    },
    PARTIALLY_REFUNDED: { on: { ...settledChain, 'refund.confirmed': [...refunds, refundRecorded], ...refundHolds } },
    REFUNDED: { on: { ...settledChain, ...refundOutcomes, 'refund.released': uncount, 'refund.reverted': uncount } },
    EXPIRED: {
      // Late payments: a transfer signed before expiry may still arrive within the window.
      on: {
        'chain.tx.seen': [{ guard: not('withinMonitoringWindow') }, ...newTx.on['chain.tx.seen']],
        'chain.tx.included': [{ guard: not('withinMonitoringWindow') }, ...newTx.on['chain.tx.included']],
        'chain.reorged': noteNews,
        'chain.tx.dropped': noteNews,
        'chain.block': keepDepth,
        ...refundOutcomes,
      },
    },
    FAILED: {
      // A failed receipt does not consume the reference: any tx may still satisfy the intent.
      on: {
        'chain.tx.seen': [{ guard: not('withinMonitoringWindow') }, ...newTx.on['chain.tx.seen']],
        'chain.tx.included': [{ guard: or([not('withinMonitoringWindow'), 'knownInclusion']) }, ...newTx.on['chain.tx.included']],
        'chain.reorged': noteNews,
        'chain.tx.dropped': noteNews,
        'chain.block': keepDepth,
        ...refundOutcomes,
      },
    },
  },
});

export type PaymentIntentMachine = typeof paymentIntentMachine;
