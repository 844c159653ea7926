/**
 * The payment intent's vocabulary: its types, and the named actions (context updates) and
 * guards (rules.ts) that the chart in machine.ts and chain-transitions.ts refer to by name.
 */
import { assign, setup } from 'xstate';
import { effectActions } from '../kit/effects.ts';
import { noteStatus } from '../chain/signal-order.ts';
import type { PaymentIntentContext, PaymentIntentInput } from './context.ts';
import type { PaymentIntentEvent } from './events.ts';
import * as rules from './rules.ts';
import { applyOutcome, countedOutcome, heldOutcome } from './refund-ledger.ts';

export const pi = setup({
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
    /** A refund's outcome (confirmed, reverted, released) puts its record where the outcome says (refund-ledger.ts). */
    recordRefund: assign(({ context, event }) => applyOutcome(context, event)),
    holdRefund: assign(({ context, event }) =>
      event.type === 'refund.reserve' ? { refund_holds: [...(context.refund_holds ?? []), { refund_id: event.refund_id, amount: event.amount, at: event.at }] } : {},
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
    refundNews: ({ context, event }) => rules.refundNews(context, event),
    countedOutcome: ({ context, event }) => countedOutcome(context, event),
    heldOutcome: ({ context, event }) => heldOutcome(context, event),
    refundsCoverCap: ({ context }) => rules.refundsCoverCap(context),
    refundsRecorded: ({ context }) => rules.refundsRecorded(context),
    staleSignal: ({ context, event }) => rules.staleSignal(context, event),
    newsOfOurTx: ({ context, event }) => rules.newsOfOurTx(context, event),
    movedBlock: ({ context, event }) => rules.movedBlock(context, event),
    backInMempool: ({ context, event }) => rules.backInMempool(context, event),
    lostTx: ({ context, event }) => rules.lostTx(context, event),
    depthForLater: ({ context, event }) => rules.depthForLater(context, event),
    settledDeeper: ({ context, event }) => rules.settledDeeper(context, event),
  },
});

