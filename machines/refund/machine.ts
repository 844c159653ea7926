import { and, assign, or, setup } from 'xstate';
import { effectActions } from '../kit/effects.ts';
import { contextFrom } from '../kit/durable.ts';
import { noteDepth, noteStatus } from '../chain/signal-order.ts';
import { initialRefundContext, type RefundContext } from './context.ts';
import { UNSIGNED_TTL_MS, type RefundCreateEvent, type RefundEvent } from './events.ts';
import * as rules from './rules.ts';
import { refundWebhookData, type RefundStatus } from './view.ts';

/**
 * A refund is a new transfer the merchant signs from the payout address (spec rule 8):
 * REQUIRES_SIGNATURE → SUBMITTED → CONFIRMING → CONFIRMED, or FAILED / CANCELED.
 * CONFIRMED is left only when the chain takes the transfer back (a reorg deeper than its
 * confirmations, ADR 0033). The payment intent learns each outcome through `sendTo` effects.
 */
type Ctx = RefundContext;
type Args = { context: Ctx; event: RefundEvent };

const webhook = (type: string, status: RefundStatus) => ({
  type: 'emitWebhook' as const,
  params: ({ context, event }: Args) => ({ type, created: event.at, data: refundWebhookData(context, status) }),
});
/**
 * Outcomes are numbered (`seq`, ADR 0033): two consumers may deliver a confirmation and the
 * reversal that follows it in either order, and the intent keeps the newest. The count moves
 * in the same step (`countOutcome`, listed right after).
 */
const toIntent = (type: 'refund.confirmed' | 'refund.reverted' | 'refund.released') => ({
  type: 'sendTo' as const,
  params: ({ context, event }: Args) => {
    const seq = rules.outcomesSent(context) + 1;
    return {
      kind: 'payment_intent',
      actorId: context.payment_intent,
      event: { type, id: `${type}:${context.refund_id}:${seq}`, at: event.at, refund_id: context.refund_id, amount: context.amount, seq },
    };
  },
});
/** The chain took a completed refund's transfer back: said to the merchant, then to the intent (ADR 0033). */
const reorgedHook = (status: RefundStatus) => ({
  type: 'emitWebhook' as const,
  params: ({ context, event }: Args) => ({ type: 'refund.reorged', created: event.at, data: refundWebhookData(context, status) }),
});
const reverse = (status: RefundStatus) => [reorgedHook(status), toIntent('refund.reverted'), 'countOutcome' as const, 'reopen' as const];
const unsignedTimer = {
  type: 'scheduleTimer' as const,
  params: ({ event }: Args) => ({ name: 'unsigned', at: event.at + UNSIGNED_TTL_MS, event: 'timer.expired' }),
};
const cancelUnsigned = { type: 'cancelTimer' as const, params: { name: 'unsigned' } };

const rf = setup({
  types: { context: {} as RefundContext, events: {} as RefundEvent, input: {} as RefundCreateEvent },
  actions: {
    ...effectActions,
    recordTx: assign(({ context, event }) => {
      if (event.type === 'refund.submitted') return { tx_hash: event.tx_hash };
      if (event.type === 'chain.tx.seen') return { tx_hash: event.tx_hash, chain_mark: noteStatus(context.chain_mark, event) };
      if (event.type !== 'chain.tx.included') return {};
      return {
        tx_hash: event.tx_hash,
        block_height: event.block_height,
        block_hash: event.block_hash,
        confirmations: rules.inclusionDepth(context, event),
        inclusion_pos: event.pos ?? null,
        chain_mark: noteStatus(context.chain_mark, event),
      };
    }),
    /** Records the position of a chain signal that moves nothing else (ADR 0016). */
    noteChain: assign(({ context, event }) => {
      if (event.type === 'chain.block') return { chain_depth: noteDepth(context.chain_depth, event) };
      if (event.type === 'chain.tx.seen' || event.type === 'chain.tx.included' || event.type === 'chain.reorged' || event.type === 'chain.tx.dropped') {
        return { chain_mark: noteStatus(context.chain_mark, event) };
      }
      return {};
    }),
    trackDepth: assign(({ context, event }) =>
      event.type === 'chain.block' && context.block_height !== null ? { confirmations: rules.confirmationsAt(context.block_height, event.head) } : {},
    ),
    clearInclusion: assign({ block_height: null, block_hash: null, confirmations: 0, inclusion_pos: null }),
    clearTx: assign({ tx_hash: null, block_height: null, block_hash: null, confirmations: 0, inclusion_pos: null }),
    complete: assign({ completed_at: ({ event }) => event.at }),
    reopen: assign({ completed_at: null }),
    countOutcome: assign({ outcomes_sent: ({ context }) => rules.outcomesSent(context) + 1 }),
    noteFailure: assign({ failure: ({ event }) => (event.type === 'chain.tx.included' ? 'receipt_failed' : event.type === 'timer.expired' ? 'unsigned_expired' : 'canceled') }),
  },
  guards: {
    paysRefund: ({ context, event }) => rules.paysRefund(context, event),
    sameTx: ({ context, event }) => rules.sameTx(context, event),
    depthReached: ({ context, event }) => rules.depthReached(context, event),
    receiptFailed: ({ event }) => rules.receiptFailed(event),
    unsignedDue: ({ context, event }) => rules.unsignedDue(context, event),
    staleSignal: ({ context, event }) => rules.staleSignal(context, event),
    newsOfOurTx: ({ context, event }) => rules.newsOfOurTx(context, event),
    depthApplicable: ({ context, event }) => rules.depthApplicable(context, event),
    depthForLater: ({ context, event }) => rules.depthForLater(context, event),
    knownInclusion: ({ context, event }) => rules.knownInclusion(context, event),
    depthAdvances: ({ context, event }) => rules.depthAdvances(context, event),
    backInMempool: ({ context, event }) => rules.backInMempool(context, event),
    droppedNews: ({ context, event }) => rules.droppedNews(context, event),
    movedInclusion: ({ context, event }) => rules.movedInclusion(context, event),
  },
});

const confirmed = ['recordTx', 'complete', webhook('refund.completed', 'CONFIRMED'), toIntent('refund.confirmed'), 'countOutcome'] as const;
const failed = ['recordTx', 'noteFailure', toIntent('refund.released'), 'countOutcome'] as const;
const released = ['noteFailure', toIntent('refund.released'), 'countOutcome'] as const;
// A transfer carrying the refund reference and paying the whole amount to the customer.
const inclusion = [
  { guard: 'staleSignal' as const },
  { guard: and(['paysRefund', 'receiptFailed']), target: 'FAILED', actions: [...failed] },
  { guard: and(['paysRefund', 'depthReached']), target: 'CONFIRMED', actions: [...confirmed] },
  { guard: 'paysRefund' as const, target: 'CONFIRMING', actions: ['recordTx' as const] },
];
/** Chain signals in any order (ADR 0016): older statements are dropped, news that moves nothing is recorded. */
const noteNews = { guard: 'newsOfOurTx' as const, actions: ['noteChain' as const] };
const keepDepth = { guard: 'depthForLater' as const, actions: ['noteChain' as const] };

export const refundMachine = rf.createMachine({
  id: 'refund',
  initial: 'NEW',
  context: contextFrom(initialRefundContext),
  states: {
    NEW: { on: { 'refund.create': { target: 'REQUIRES_SIGNATURE', actions: [webhook('refund.created', 'REQUIRES_SIGNATURE'), unsignedTimer] } } },
    REQUIRES_SIGNATURE: {
      exit: [cancelUnsigned],
      on: {
        'refund.submitted': { target: 'SUBMITTED', actions: ['recordTx'] },
        'chain.tx.seen': [{ guard: 'staleSignal' }, { guard: 'paysRefund', target: 'SUBMITTED', actions: ['recordTx'] }],
        'chain.tx.included': inclusion,
        'chain.reorged': noteNews,
        'chain.tx.dropped': noteNews,
        'chain.block': keepDepth,
        'refund.cancel': { target: 'CANCELED', actions: [...released] },
        'timer.expired': { guard: 'unsignedDue', target: 'CANCELED', actions: [...released] },
      },
    },
    SUBMITTED: {
      on: {
        // Seen again at a newer position: recorded, so an older drop or reorg is dropped as stale.
        'chain.tx.seen': [{ guard: 'staleSignal' }, noteNews, { guard: 'sameTx' }],
        'chain.tx.included': inclusion,
        'chain.tx.dropped': [{ guard: 'staleSignal' }, { guard: 'sameTx', target: 'REQUIRES_SIGNATURE', actions: ['clearTx', 'noteChain', unsignedTimer] }],
        'chain.reorged': noteNews,
        'chain.block': keepDepth,
      },
    },
    CONFIRMING: {
      on: {
        'chain.tx.included': [
          { guard: or(['staleSignal', 'knownInclusion']) },
          { guard: and(['sameTx', 'receiptFailed']), target: 'FAILED', actions: [...failed] },
          { guard: and(['sameTx', 'depthReached']), target: 'CONFIRMED', actions: [...confirmed] },
          { guard: 'sameTx', actions: ['recordTx'] },
        ],
        'chain.block': [
          { guard: 'depthReached', target: 'CONFIRMED', actions: ['trackDepth', 'complete', webhook('refund.completed', 'CONFIRMED'), toIntent('refund.confirmed'), 'countOutcome'] },
          { guard: 'depthAdvances', actions: ['trackDepth'] },
          keepDepth,
        ],
        'chain.reorged': [{ guard: 'staleSignal' }, { guard: 'sameTx', target: 'SUBMITTED', actions: ['clearInclusion', 'noteChain'] }],
        // Positional news that the transfer left its block (ADR 0016): seen back in the mempool, as the
        // older reorg would have moved it; dropped, as that reorg and then the drop would have.
        'chain.tx.seen': [{ guard: 'backInMempool', target: 'SUBMITTED', actions: ['clearInclusion', 'noteChain'] }, noteNews],
        'chain.tx.dropped': [{ guard: 'droppedNews', target: 'REQUIRES_SIGNATURE', actions: ['clearTx', 'noteChain', unsignedTimer] }, noteNews],
      },
    },
    /**
     * Final unless the chain takes the transfer back (ADR 0033): positional news that its block
     * left the chain (reorged, back in the mempool, dropped, or included in another block)
     * moves the refund where the in-order run would be, and the intent un-counts it.
     */
    CONFIRMED: {
      on: {
        'chain.reorged': [{ guard: 'staleSignal' }, { guard: 'newsOfOurTx', target: 'SUBMITTED', actions: [...reverse('SUBMITTED'), 'clearInclusion', 'noteChain'] }],
        'chain.tx.seen': [{ guard: 'staleSignal' }, { guard: 'backInMempool', target: 'SUBMITTED', actions: [...reverse('SUBMITTED'), 'clearInclusion', 'noteChain'] }],
        'chain.tx.dropped': [
          { guard: 'staleSignal' },
          { guard: 'droppedNews', target: 'REQUIRES_SIGNATURE', actions: [...reverse('REQUIRES_SIGNATURE'), 'clearTx', 'noteChain', unsignedTimer] },
        ],
        'chain.tx.included': [
          { guard: or(['staleSignal', 'knownInclusion']) },
          { guard: and(['movedInclusion', 'receiptFailed']), target: 'FAILED', actions: [...reverse('SUBMITTED'), ...failed] },
          { guard: and(['movedInclusion', 'depthReached']), target: 'CONFIRMED', actions: [...reverse('SUBMITTED'), ...confirmed] },
          { guard: 'movedInclusion', target: 'CONFIRMING', actions: [...reverse('SUBMITTED'), 'recordTx'] },
          // The same block applied again at a newer position: only its position is news.
          { guard: 'newsOfOurTx', actions: ['recordTx'] },
        ],
        // A depth report for a later inclusion may overtake the reorg that precedes it.
        'chain.block': keepDepth,
      },
    },
    FAILED: {},
    CANCELED: {},
  },
});
