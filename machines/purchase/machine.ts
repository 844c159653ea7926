import { and, assertEvent, assign, not, setup } from 'xstate';
import { contextFrom } from '../kit/durable.ts';
import { effectActions } from '../kit/effects.ts';
import { initialPurchaseContext, type PurchaseContext } from './context.ts';
import type { PurchaseEvent, PurchaseQuoteEvent } from './events.ts';
import * as rules from './rules.ts';
import { legSettled, watchLegs } from './chain-legs.ts';
import { paidCallCounts } from '../listing/score.ts';

/**
 * One purchase intent `pi_…` (DESIGN §5 "Purchase actor states"): QUOTED → VERIFIED →
 * SETTLED, QUOTED/VERIFIED → EXPIRED, FEE_FAILED when the seller was paid and the fee leg
 * could not settle; routed execution QUOTED → EXECUTING → SETTLED | SELLER_FAILED, where the
 * fee is settled only after the seller answered below 400. The fee is settled only after the seller leg: `leg.settled` for the fee
 * is accepted only once the seller's has been recorded. Terminal states accept nothing.
 * A `leg.settled` counts only when its transfer is the leg's own (ADR 0069): the seller's nonce
 * spent any other way (another transfer, a cancellation) ends the purchase EXPIRED at once, the
 * fee never used; the fee's spent so after the seller was paid is FEE_FAILED.
 * On USDC a served answer may carry the fee's settlement made by the statement that records it
 * (`fee_tx`, ADR 0052): EXECUTING → SETTLED at once; no other transition takes such an answer.
 *
 * Routed execution on the ANM lane (ADR 0038) watches the forwarded seller transfer and the fee
 * transfer on the chain: a served answer is not enough, the seller transfer must also reach the
 * settlement depth before the fee's `validBefore` (`seller_deadline`), else SELLER_FAILED; the
 * fee counts as taken once its own transfer is as deep.
 */
type Args = { context: PurchaseContext; event: PurchaseEvent };

const quoteTimer = { type: 'scheduleTimer' as const, params: ({ context }: Args) => ({ name: 'quote', at: context.expires_at, event: 'timer.expired' }) };
const deadlineTimer = {
  type: 'scheduleTimer' as const,
  params: ({ context }: Args) => ({ name: 'seller_deadline', at: context.legs?.seller.valid_before ?? context.expires_at, event: 'timer.expired' }),
};
const tellListing = {
  type: 'sendTo' as const,
  params: ({ context, event }: Args) => ({
    kind: 'listing',
    actorId: context.resource_id,
    event: { type: 'listing.purchase_settled', id: `settled:${context.intent_id}`, at: event.at, intent_id: context.intent_id },
  }),
};

const cancelExecution = { type: 'cancelTimer' as const, params: { name: 'execution' } };
/**
 * The listing's paid-call success learns how the seller served a routed execution, once per
 * intent; an end that does not count (a 4xx, ADR 0088) is not sent (an empty recipient).
 */
const tellExecuted = {
  type: 'sendTo' as const,
  params: ({ context, event }: Args) => {
    const ok = paidCallCounts(event.type === 'execute.answered' ? event.seller_status : null);
    return {
      kind: 'listing',
      actorId: ok === null ? '' : context.resource_id,
      event: { type: 'listing.executed', id: `executed:${context.intent_id}`, at: event.at, intent_id: context.intent_id, ok: ok === true },
    };
  },
};
/** ANM routed execution: the seller transfer must be settled before the fee leg may no longer be used. */
const executionSellerDeadline = {
  type: 'scheduleTimer' as const,
  params: ({ context, event }: Args) => ({ name: 'seller_deadline', at: context.execution?.fee.valid_before ?? event.at, event: 'timer.expired' }),
};

const executionTimer = {
  type: 'scheduleTimer' as const,
  params: ({ event }: Args) => ({ name: 'execution', at: event.type === 'purchase.execute' ? event.deadline_at : event.at, event: 'timer.expired' }),
};

/**
 * ANM lane (DESIGN §3, ADR 0016): a leg is settled while its transfer is included with a
 * successful receipt and `required_confirmations` deep. SETTLED needs both legs settled;
 * a seller leg that leaves the chain (a reorg) before the fee leg is settled is taken back,
 * and the seller's deadline runs again: it must come back before it, or the purchase ends
 * EXPIRED. Signals older than what the purchase knows of a leg change nothing.
 */
const cancelDeadline = { type: 'cancelTimer' as const, params: { name: 'seller_deadline' } };
const chainSignal = [
  { guard: 'chainSettles' as const, target: 'SETTLED' as const, actions: ['applyChainSignal' as const, cancelDeadline, tellListing] },
  { guard: 'chainFeeFails' as const, target: 'FEE_FAILED' as const, actions: ['applyChainSignal' as const, 'noteChainFailure' as const] },
  { guard: 'chainSellerSettles' as const, actions: ['applyChainSignal' as const, cancelDeadline] },
  { guard: 'chainSellerChanges' as const, actions: ['applyChainSignal' as const, deadlineTimer] },
  { guard: 'chainMoves' as const, actions: ['applyChainSignal' as const] },
];

/** The same signals during an ANM routed execution: the fee counts only once the seller served. */
const executionChainSignal = [
  { guard: and(['sellerServed', 'chainSettles']), target: 'SETTLED' as const, actions: ['applyExecutionChain' as const, cancelDeadline, tellListing] },
  { guard: and(['sellerServed', 'chainFeeFails']), target: 'FEE_FAILED' as const, actions: ['applyExecutionChain' as const, 'noteChainFailure' as const] },
  { guard: 'chainMoves' as const, actions: ['applyExecutionChain' as const] },
];

const purchase = setup({
  types: { context: {} as PurchaseContext, events: {} as PurchaseEvent, input: {} as PurchaseQuoteEvent },
  actions: {
    ...effectActions,
    recordLegs: assign(({ event }) => {
      assertEvent(event, 'purchase.verify');
      return { legs: { seller: { ...event.legs.seller, tx: null }, fee: { ...event.legs.fee, tx: null } } };
    }),
    recordSettled: assign(({ context, event }) => {
      assertEvent(event, 'leg.settled');
      if (!context.legs) return {};
      const legs = { ...context.legs, [event.leg]: { ...context.legs[event.leg], tx: event.tx } };
      return event.leg === 'fee' ? { legs, settled_at: event.at } : { legs };
    }),
    /** ANM lane: the legs' transfers are watched on the chain from verification on. */
    watchChain: assign(({ context, event }) => {
      assertEvent(event, 'purchase.verify');
      const { seller, fee } = event.legs;
      if (context.required_confirmations === undefined || !seller.tx_hash || !fee.tx_hash) return {};
      return { chain: watchLegs(seller.tx_hash, fee.tx_hash, context.required_confirmations) };
    }),
    /** A chain signal: the legs' new standing; a leg's `tx` is set exactly while it counts as settled. */
    applyChainSignal: assign(({ context, event }) => {
      const chain = rules.chainAfter(context, event);
      if (!chain || !context.legs) return {};
      const seller = legSettled(chain, 'seller') ? chain.seller.tx : null;
      // The fee's inclusion may be heard before the seller's: it counts only with the seller's.
      const fee = seller && legSettled(chain, 'fee') ? chain.fee.tx : null;
      const legs = { seller: { ...context.legs.seller, tx: seller }, fee: { ...context.legs.fee, tx: fee } };
      return { chain, legs, ...(legs.seller.tx && legs.fee.tx && { settled_at: event.at }) };
    }),
    recordExecution: assign(({ context, event }) => {
      assertEvent(event, 'purchase.execute');
      const execution = { fee: { ...event.fee, tx: null }, seller_status: null, started_at: event.at };
      const watch = context.required_confirmations !== undefined && event.seller_tx !== undefined && event.fee.tx_hash !== undefined;
      return watch ? { execution, chain: watchLegs(event.seller_tx!, event.fee.tx_hash!, context.required_confirmations!) } : { execution };
    }),
    /** A chain signal during an ANM execution: the fee's `tx` is set exactly when it counts as taken. */
    applyExecutionChain: assign(({ context, event }) => {
      const chain = rules.chainAfter(context, event);
      if (!chain || !context.execution) return {};
      const taken = rules.sellerServed(context) && legSettled(chain, 'seller') && legSettled(chain, 'fee');
      return { chain, execution: { ...context.execution, fee: { ...context.execution.fee, tx: taken ? chain.fee.tx : null } }, ...(taken && { settled_at: event.at }) };
    }),
    /** A served answer when both transfers were already settled on the chain. */
    takeChainFee: assign(({ context, event }) => {
      if (!context.execution || !context.chain) return {};
      return { execution: { ...context.execution, fee: { ...context.execution.fee, tx: context.chain.fee.tx } }, settled_at: event.at };
    }),
    recordAnswer: assign(({ context, event }) => {
      assertEvent(event, 'execute.answered');
      return context.execution ? { execution: { ...context.execution, seller_status: event.seller_status } } : {};
    }),
    recordAnswerFee: assign(({ context, event }) => {
      assertEvent(event, 'execute.answered');
      return context.execution && event.fee_tx ? { execution: { ...context.execution, fee: { ...context.execution.fee, tx: event.fee_tx } }, settled_at: event.at } : {};
    }),
    recordExecutionFee: assign(({ context, event }) => {
      assertEvent(event, 'leg.settled');
      return context.execution ? { execution: { ...context.execution, fee: { ...context.execution.fee, tx: event.tx } }, settled_at: event.at } : {};
    }),
    noteSellerFailure: assign(({ event }) => ({
      failure:
        event.type === 'execute.answered'
          ? `seller answered ${event.seller_status}`
          : event.type === 'execute.failed'
            ? `seller: ${event.reason}`
            : rules.isTimer(event, 'seller_deadline')
              ? 'seller: its transfer was not settled on the chain before the fee leg expired'
              : 'seller: no answer recorded before the deadline',
    })),
    noteChainFailure: assign({ failure: 'fee: the fee transfer failed on the chain' }),
    noteSpent: assign(({ event }) => {
      assertEvent(event, 'leg.settled');
      const t = event.transfer;
      return { failure: `${event.leg}: its nonce was used by another transfer (${t.value} from ${t.from} to ${t.to}, ${event.tx})` };
    }),
    noteFailure: assign(({ event }) => ({
      failure: event.type === 'leg.failed' ? `${event.leg}: ${event.reason}` : event.type === 'timer.expired' ? `${event.timer} passed` : null,
    })),
  },
  guards: {
    legsMatchQuote: ({ context, event }) => rules.legsMatchQuote(context, event),
    sellerSettled: ({ context }) => rules.sellerSettled(context),
    sellerLeg: ({ event }) => rules.isLeg(event, 'seller'),
    feeLeg: ({ event }) => rules.isLeg(event, 'fee'),
    transferIsLeg: ({ context, event }) => rules.transferIsLeg(context, event),
    quoteDue: ({ event }) => rules.isTimer(event, 'quote'),
    deadlineDue: ({ event }) => rules.isTimer(event, 'seller_deadline'),
    chainSettles: ({ context, event }) => rules.chainSettles(context, event),
    chainFeeFails: ({ context, event }) => rules.chainFeeFails(context, event),
    chainSellerSettles: ({ context, event }) => rules.chainSellerSettles(context, event),
    chainSellerChanges: ({ context, event }) => rules.chainSellerChanges(context, event),
    chainMoves: ({ context, event }) => rules.chainMoves(context, event),
    watchesChain: ({ context }) => context.chain != null,
    feeMatchesQuote: ({ context, event }) => rules.feeMatchesQuote(context, event),
    sellerAnswered: ({ context }) => rules.sellerAnswered(context),
    sellerServed: ({ context }) => rules.sellerServed(context),
    answerServes: ({ event }) => rules.answerServes(event),
    answerTakesFee: ({ event }) => rules.answerTakesFee(event),
    executionDue: ({ event }) => rules.isTimer(event, 'execution'),
    executionSellerSettled: ({ context }) => rules.executionSellerSettled(context),
    chainBothSettled: ({ context }) => rules.chainBothSettled(context),
  },
});

export const purchaseMachine = purchase.createMachine({
  id: 'purchase',
  initial: 'NEW',
  context: contextFrom(initialPurchaseContext),
  states: {
    NEW: { on: { 'purchase.quote': { target: 'QUOTED', actions: [quoteTimer] } } },
    QUOTED: {
      on: {
        'purchase.verify': { guard: 'legsMatchQuote', target: 'VERIFIED', actions: ['recordLegs', 'watchChain', { type: 'cancelTimer', params: { name: 'quote' } }, deadlineTimer] },
        'purchase.execute': {
          guard: 'feeMatchesQuote',
          target: 'EXECUTING',
          actions: ['recordExecution', { type: 'cancelTimer', params: { name: 'quote' } }, executionTimer],
        },
        'timer.expired': { guard: 'quoteDue', target: 'EXPIRED', actions: ['noteFailure'] },
      },
    },
    EXECUTING: {
      on: {
        'execute.answered': [
          // USDC: a served answer recorded in the statement that settles the fee (ADR 0052). An
          // answer naming a fee transaction is taken by no other branch: its statement moves the fee.
          { guard: and([not('sellerAnswered'), 'answerServes', 'answerTakesFee', not('watchesChain')]), target: 'SETTLED', actions: ['recordAnswer', cancelExecution, tellExecuted, 'recordAnswerFee', tellListing] },
          { guard: and([not('sellerAnswered'), 'answerServes', 'chainBothSettled', not('answerTakesFee')]), target: 'SETTLED', actions: ['recordAnswer', cancelExecution, tellExecuted, 'takeChainFee', tellListing] },
          // ANM: the fee waits for the seller transfer's depth, until the fee leg's validBefore.
          { guard: and([not('sellerAnswered'), 'answerServes', 'watchesChain', not('answerTakesFee')]), actions: ['recordAnswer', cancelExecution, tellExecuted, executionSellerDeadline] },
          { guard: and([not('sellerAnswered'), 'answerServes', not('answerTakesFee')]), actions: ['recordAnswer', cancelExecution, tellExecuted] },
          { guard: and([not('sellerAnswered'), not('answerTakesFee')]), target: 'SELLER_FAILED', actions: ['recordAnswer', 'noteSellerFailure', cancelExecution, tellExecuted] },
        ],
        'execute.failed': { guard: not('sellerAnswered'), target: 'SELLER_FAILED', actions: ['noteSellerFailure', cancelExecution, tellExecuted] },
        'timer.expired': [
          // A runtime that died mid-call recorded no answer: the fee is never taken for it.
          { guard: and(['executionDue', not('sellerAnswered')]), target: 'SELLER_FAILED', actions: ['noteSellerFailure'] },
          // ANM: a served answer whose seller transfer never settled in time: the seller was not paid.
          { guard: and(['deadlineDue', 'watchesChain', 'sellerServed', not('executionSellerSettled')]), target: 'SELLER_FAILED', actions: ['noteSellerFailure'] },
        ],
        // The USDC lane reports its fee settlement; the ANM lane's come as chain signals.
        'leg.settled': [
          { guard: and(['feeLeg', 'sellerServed', not('watchesChain'), 'transferIsLeg']), target: 'SETTLED', actions: ['recordExecutionFee', tellListing] },
          { guard: and(['feeLeg', 'sellerServed', not('watchesChain')]), target: 'FEE_FAILED', actions: ['noteSpent'] },
        ],
        'leg.failed': { guard: and(['feeLeg', 'sellerServed']), target: 'FEE_FAILED', actions: ['noteFailure'] },
        'chain.tx.seen': executionChainSignal,
        'chain.tx.included': executionChainSignal,
        'chain.block': executionChainSignal,
        'chain.reorged': executionChainSignal,
        'chain.tx.dropped': executionChainSignal,
      },
    },
    SELLER_FAILED: { type: 'final' },
    VERIFIED: {
      on: {
        'leg.settled': [
          // The ANM lane's legs settle by chain signals only.
          { guard: and(['sellerLeg', not('sellerSettled'), not('watchesChain'), 'transferIsLeg']), actions: ['recordSettled', cancelDeadline] },
          // The seller's nonce used by another transfer: the seller leg can never settle, so the
          // purchase ends as its deadline would end it, now, and the fee is never used.
          { guard: and(['sellerLeg', not('sellerSettled'), not('watchesChain')]), target: 'EXPIRED', actions: ['noteSpent', cancelDeadline] },
          { guard: and(['feeLeg', 'sellerSettled', not('watchesChain'), 'transferIsLeg']), target: 'SETTLED', actions: ['recordSettled', tellListing] },
          { guard: and(['feeLeg', 'sellerSettled', not('watchesChain')]), target: 'FEE_FAILED', actions: ['noteSpent'] },
        ],
        'leg.failed': [
          { guard: and(['feeLeg', 'sellerSettled']), target: 'FEE_FAILED', actions: ['noteFailure'] },
          // The seller's authorization cancelled (or its nonce otherwise spent) before it paid the seller.
          { guard: and(['sellerLeg', not('sellerSettled'), not('watchesChain')]), target: 'EXPIRED', actions: ['noteFailure', cancelDeadline] },
        ],
        // The seller was never paid in time: the fee authorization is never used.
        'timer.expired': { guard: and(['deadlineDue', not('sellerSettled')]), target: 'EXPIRED', actions: ['noteFailure'] },
        'chain.tx.seen': chainSignal,
        'chain.tx.included': chainSignal,
        'chain.block': chainSignal,
        'chain.reorged': chainSignal,
        'chain.tx.dropped': chainSignal,
      },
    },
    SETTLED: { type: 'final' },
    EXPIRED: { type: 'final' },
    FEE_FAILED: { type: 'final' },
  },
});
