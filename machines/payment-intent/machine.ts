import { and, assign, not, or, setup } from 'xstate';
import { effectActions } from '../kit/effects.ts';
import { contextFrom } from '../kit/durable.ts';
import { noteStatus } from '../chain/signal-order.ts';
import { initialContext, type PaymentIntentContext, type PaymentIntentInput } from './context.ts';
import type { PaymentIntentEvent } from './events.ts';
import * as rules from './rules.ts';
import { webhookData, type PaymentIntentStatus } from './view.ts';

/**
 * The payment intent as a durable actor (DESIGN §4 "Payment intent transitions"). Chain
 * signals, timers and commands arrive as events; webhooks and timers leave as effect actions.
 *
 * A transition written as `{ guard: X }` with no target and no actions is a deliberate
 * blocker: it swallows the event before later branches see it, so the kit reports it as
 * not accepted (one tx per intent, late-payment window, duplicate signals).
 */

type Ctx = PaymentIntentContext;
type Reason = (ctx: Ctx, e: PaymentIntentEvent) => string | null;

/** Every webhook carries the state the intent is in once this step's context is assigned. */
function webhook(type: string, status: PaymentIntentStatus, reason?: Reason) {
  return {
    type: 'emitWebhook' as const,
    params: ({ context, event }: { context: Ctx; event: PaymentIntentEvent }) => ({
      type,
      created: event.at,
      data: webhookData(context, status, { reason: reason ? reason(context, event) : null }),
    }),
  };
}

const scheduleExpiry = {
  type: 'scheduleTimer' as const,
  params: ({ context }: { context: Ctx }) => ({ name: 'expiry', at: context.expires_at, event: 'timer.expired' }),
};
const cancelExpiry = { type: 'cancelTimer' as const, params: { name: 'expiry' } };

const created = webhook('payment.created', 'AWAITING_PAYMENT');
const detected = webhook('payment.detected', 'PAYMENT_DETECTED');
const confirming = webhook('payment.confirming', 'CONFIRMING');
const confirmed = webhook('payment.confirmed', 'PAID', (ctx) => rules.overpaidReason(ctx));
const failed = webhook('payment.failed', 'FAILED');
const underpaid = webhook('payment.underpaid', 'UNDERPAID', (ctx) => (ctx.tx ? rules.underpaidReason(ctx, ctx.tx) : null));
const overpaid = webhook('payment.overpaid', 'OVERPAID', (ctx) => rules.overpaidReason(ctx));
const expired = webhook('payment.expired', 'EXPIRED');
const canceled = webhook('payment.expired', 'EXPIRED', () => 'canceled');
// Emitted before the tx is cleared so the merchant learns which settlement was reversed.
const reorged = {
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

const pi = setup({
  types: {
    context: {} as PaymentIntentContext,
    events: {} as PaymentIntentEvent,
    input: {} as PaymentIntentInput,
  },
  actions: {
    ...effectActions,
    matchTx: assign(({ context, event }) => {
      if (event.type !== 'chain.tx.seen' && event.type !== 'chain.tx.included') return {};
      const inclusion = event.type === 'chain.tx.included' ? event : null;
      return {
        tx: {
          hash: event.tx_hash,
          from: event.from,
          merchant_leg: event.merchant_leg,
          fee_leg: event.fee_leg,
          block_height: inclusion?.block_height ?? null,
          block_hash: inclusion?.block_hash ?? null,
          receipt: inclusion?.receipt ?? null,
          pos: inclusion?.pos ?? null,
        },
        confirmations: inclusion?.receipt === 'success' ? rules.inclusionDepth(context, inclusion) : 0,
        excess: rules.excessOf(context, event).toString(),
        chain_mark: noteStatus(context.chain_mark, event),
      };
    }),
    /** Records the position of a chain signal that moves nothing else (ADR 0016). */
    noteChain: assign(({ context, event }) => rules.chainNotes(context, event)),
    trackDepth: assign(({ context, event }) => {
      const h = context.tx?.block_height;
      return event.type === 'chain.block' && h != null ? { confirmations: rules.confirmationsAt(h, event.head) } : {};
    }),
    settle: assign({ completed_at: ({ event }) => event.at }),
    clearTx: assign({ tx: null, confirmations: 0, excess: '0', completed_at: null }),
    reopen: assign(({ context, event }) => ({ expires_at: rules.reopenedDeadline(context, event.at), expired_at: null })),
    markExpired: assign({ expired_at: ({ event }) => event.at }),
    recordRefund: assign(({ context, event }) =>
      event.type === 'refund.confirmed'
        ? {
            refunds: [...context.refunds, { refund_id: event.refund_id, amount: event.amount, at: event.at }],
            refund_holds: (context.refund_holds ?? []).filter((h) => h.refund_id !== event.refund_id),
          }
        : {},
    ),
    holdRefund: assign(({ context, event }) =>
      event.type === 'refund.reserve' ? { refund_holds: [...(context.refund_holds ?? []), { refund_id: event.refund_id, amount: event.amount, at: event.at }] } : {},
    ),
    releaseRefund: assign(({ context, event }) =>
      event.type === 'refund.released' ? { refund_holds: (context.refund_holds ?? []).filter((h) => h.refund_id !== event.refund_id) } : {},
    ),
  },
  guards: {
    legsShort: ({ context, event }) => rules.legsShort(context, event),
    legsOver: ({ context, event }) => rules.legsOver(context, event),
    depthReached: ({ context, event }) => rules.depthReached(context, event),
    depthAdvances: ({ context, event }) => rules.depthAdvances(context, event),
    receiptFailed: ({ context, event }) => rules.receiptFailed(context, event),
    sameTx: ({ context, event }) => rules.sameTx(context, event),
    otherTx: ({ context, event }) => rules.otherTx(context, event),
    knownInclusion: ({ context, event }) => rules.knownInclusion(context, event),
    inclusionNews: ({ context, event }) => rules.inclusionNews(context, event),
    withinMonitoringWindow: ({ context, event }) => rules.withinMonitoringWindow(context, event),
    expiryDue: ({ context, event }) => rules.expiryDue(context, event),
    refundWithinCap: ({ context, event }) => rules.refundWithinCap(context, event),
    refundCompletes: ({ context, event }) => rules.refundCompletes(context, event),
    reserveFits: ({ context, event }) => rules.reserveFits(context, event),
    holdExists: ({ context, event }) => rules.holdExists(context, event),
    staleSignal: ({ context, event }) => rules.staleSignal(context, event),
    newsOfOurTx: ({ context, event }) => rules.newsOfOurTx(context, event),
    movedBlock: ({ context, event }) => rules.movedBlock(context, event),
    backInMempool: ({ context, event }) => rules.backInMempool(context, event),
    lostTx: ({ context, event }) => rules.lostTx(context, event),
    depthForLater: ({ context, event }) => rules.depthForLater(context, event),
    settledDeeper: ({ context, event }) => rules.settledDeeper(context, event),
  },
});

/** A transaction not yet known to the intent is matched and classified by its legs. */
const newTx = pi.createStateConfig({
  on: {
    'chain.tx.seen': [
      { guard: 'staleSignal' },
      { guard: 'legsShort', target: 'UNDERPAID', actions: ['matchTx', underpaid] },
      { guard: 'legsOver', target: 'OVERPAID', actions: ['matchTx', overpaid] },
      { target: 'PAYMENT_DETECTED', actions: ['matchTx', detected] },
    ],
    'chain.tx.included': [
      { guard: 'staleSignal' },
      { guard: 'receiptFailed', target: 'FAILED', actions: ['matchTx', failed] },
      { guard: 'legsShort', target: 'UNDERPAID', actions: ['matchTx', underpaid] },
      { guard: and(['legsOver', 'depthReached']), target: 'PAID', actions: ['matchTx', overpaid, 'settle', confirmed] },
      { guard: 'legsOver', target: 'OVERPAID', actions: ['matchTx', overpaid] },
      { guard: 'depthReached', target: 'PAID', actions: ['matchTx', confirming, 'settle', confirmed] },
      { target: 'CONFIRMING', actions: ['matchTx', confirming] },
    ],
  },
});

/** Pre-settlement: losing the tx (reorg or mempool drop) re-opens the intent, no webhook. */
const reopenOnLoss = [
  { guard: 'lostTx' as const, target: 'AWAITING_PAYMENT', actions: ['clearTx' as const, 'reopen' as const, 'noteChain' as const, scheduleExpiry] },
  { guard: 'newsOfOurTx' as const, actions: ['noteChain' as const] },
];
/** Any state: a depth report for an inclusion not heard of yet is kept for when it arrives. */
const keepDepth = { guard: 'depthForLater' as const, actions: ['noteChain' as const] };
/** Positional news of the tx that moves nothing here is still recorded, so older news is dropped. */
const noteNews = { guard: 'newsOfOurTx' as const, actions: ['noteChain' as const] };

/**
 * The matched tx, known in a block, seen in the mempool at a newer position: its block left
 * the chain. Evaluated as a fresh mempool match in the same step, as if the reorg signal
 * (older, still on its way, and dropped as stale once this is recorded) had come first
 * (ADR 0016). Before settlement the loss sends no webhook; a settled intent's sends
 * `payment.reorged` first, as the reorg would have.
 */
const reseen = pi.createStateConfig({
  on: {
    'chain.tx.seen': [
      { guard: and(['backInMempool', 'legsShort']), target: 'UNDERPAID', actions: ['clearTx', 'reopen', 'matchTx', underpaid] },
      { guard: and(['backInMempool', 'legsOver']), target: 'OVERPAID', actions: ['clearTx', 'reopen', 'matchTx', overpaid] },
      { guard: 'backInMempool', target: 'PAYMENT_DETECTED', actions: ['clearTx', 'reopen', 'matchTx', detected] },
      noteNews,
    ],
  },
}).on['chain.tx.seen'];
const settledReseen = pi.createStateConfig({
  on: {
    'chain.tx.seen': [
      { guard: and(['backInMempool', 'legsShort']), target: 'UNDERPAID', actions: [reorged, 'clearTx', 'reopen', 'matchTx', underpaid] },
      { guard: and(['backInMempool', 'legsOver']), target: 'OVERPAID', actions: [reorged, 'clearTx', 'reopen', 'matchTx', overpaid] },
      { guard: 'backInMempool', target: 'PAYMENT_DETECTED', actions: [reorged, 'clearTx', 'reopen', 'matchTx', detected] },
      noteNews,
    ],
  },
}).on['chain.tx.seen'];

/** CONFIRMING and OVERPAID: the matched tx is deepening towards settlement. */
const inFlight = pi.createStateConfig({
  on: {
    'chain.tx.seen': reseen,
    'chain.tx.included': [
      { guard: or(['otherTx', 'staleSignal']) },
      { guard: 'receiptFailed', target: 'FAILED', actions: ['matchTx', failed] },
      { guard: 'knownInclusion' },
      { guard: 'depthReached', target: 'PAID', actions: ['matchTx', 'settle', confirmed] },
      { actions: ['matchTx'] },
    ],
    'chain.block': [
      { guard: 'depthReached', target: 'PAID', actions: ['trackDepth', 'settle', confirmed] },
      { guard: 'depthAdvances', actions: ['trackDepth'] },
      keepDepth,
    ],
    'chain.reorged': reopenOnLoss,
    'chain.tx.dropped': reopenOnLoss,
  },
});

/** PAID and PARTIALLY_REFUNDED take refunds up to the cap; all settled states can be reorged. */
const settledReorg = [
  { guard: 'lostTx' as const, target: 'AWAITING_PAYMENT', actions: [reorged, 'clearTx' as const, 'reopen' as const, 'noteChain' as const, scheduleExpiry] },
  noteNews,
];
/**
 * The settled tx reported in another block at a newer position: the block it settled in left
 * the chain. The merchant gets `payment.reorged`, then the inclusion is evaluated as a fresh
 * match, as if the reorg signal (still on its way) had come first (ADR 0016).
 */
const lose = [reorged, 'clearTx', 'reopen'] as const;
const settledMoved = pi.createStateConfig({
  on: {
    'chain.tx.included': [
      { guard: and(['movedBlock', 'receiptFailed']), target: 'FAILED', actions: [...lose, 'matchTx', failed] },
      { guard: and(['movedBlock', 'legsShort']), target: 'UNDERPAID', actions: [...lose, 'matchTx', underpaid] },
      { guard: and(['movedBlock', 'legsOver', 'depthReached']), target: 'PAID', actions: [...lose, 'matchTx', overpaid, 'settle', confirmed] },
      { guard: and(['movedBlock', 'legsOver']), target: 'OVERPAID', actions: [...lose, 'matchTx', overpaid] },
      { guard: and(['movedBlock', 'depthReached']), target: 'PAID', actions: [...lose, 'matchTx', confirming, 'settle', confirmed] },
      { guard: 'movedBlock', target: 'CONFIRMING', actions: [...lose, 'matchTx', confirming] },
    ],
  },
}).on['chain.tx.included'];
const settledChain = {
  'chain.tx.seen': settledReseen,
  'chain.reorged': settledReorg,
  'chain.tx.dropped': [{ guard: and(['lostTx', 'newsOfOurTx']), target: 'AWAITING_PAYMENT', actions: [reorged, 'clearTx' as const, 'reopen' as const, 'noteChain' as const, scheduleExpiry] }],
  'chain.tx.included': [{ guard: 'staleSignal' as const }, ...settledMoved, noteNews],
  'chain.block': [{ guard: 'settledDeeper' as const, actions: ['trackDepth' as const] }, keepDepth],
};
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
const refundHolds = {
  'refund.reserve': { guard: 'reserveFits' as const, actions: ['holdRefund' as const, createRefund] },
  'refund.released': { guard: 'holdExists' as const, actions: ['releaseRefund' as const] },
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
      },
    },
    CONFIRMING: { on: inFlight.on },
    OVERPAID: { on: inFlight.on },
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
      },
    },
    PAID: { on: { ...settledChain, 'refund.confirmed': refunds, ...refundHolds } },
    PARTIALLY_REFUNDED: { on: { ...settledChain, 'refund.confirmed': refunds, ...refundHolds } },
    REFUNDED: { on: { ...settledChain, 'refund.released': refundHolds['refund.released'] } },
    EXPIRED: {
      // Late payments: a transfer signed before expiry may still arrive within the window.
      on: {
        'chain.tx.seen': [{ guard: not('withinMonitoringWindow') }, ...newTx.on['chain.tx.seen']],
        'chain.tx.included': [{ guard: not('withinMonitoringWindow') }, ...newTx.on['chain.tx.included']],
        'chain.reorged': noteNews,
        'chain.tx.dropped': noteNews,
        'chain.block': keepDepth,
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
      },
    },
  },
});

export type PaymentIntentMachine = typeof paymentIntentMachine;
