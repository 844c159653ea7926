import { and, assertEvent, assign, not, setup } from 'xstate';
import { contextFrom } from '../kit/durable.ts';
import { effectActions } from '../kit/effects.ts';
import { initialPurchaseContext, type PurchaseContext } from './context.ts';
import type { PurchaseEvent, PurchaseQuoteEvent } from './events.ts';
import * as rules from './rules.ts';

/**
 * One purchase intent `pi_…` (DESIGN §5 "Purchase actor states"): QUOTED → VERIFIED →
 * SETTLED, QUOTED/VERIFIED → EXPIRED, FEE_FAILED when the seller was paid and the fee leg
 * could not settle. The fee is settled only after the seller leg: `leg.settled` for the fee
 * is accepted only once the seller's has been recorded. Terminal states accept nothing.
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
    noteFailure: assign(({ event }) => ({
      failure: event.type === 'leg.failed' ? `${event.leg}: ${event.reason}` : event.type === 'timer.expired' ? `${event.timer} passed` : null,
    })),
  },
  guards: {
    legsMatchQuote: ({ context, event }) => rules.legsMatchQuote(context, event),
    sellerSettled: ({ context }) => rules.sellerSettled(context),
    sellerLeg: ({ event }) => rules.isLeg(event, 'seller'),
    feeLeg: ({ event }) => rules.isLeg(event, 'fee'),
    quoteDue: ({ event }) => rules.isTimer(event, 'quote'),
    deadlineDue: ({ event }) => rules.isTimer(event, 'seller_deadline'),
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
        'purchase.verify': { guard: 'legsMatchQuote', target: 'VERIFIED', actions: ['recordLegs', { type: 'cancelTimer', params: { name: 'quote' } }, deadlineTimer] },
        'timer.expired': { guard: 'quoteDue', target: 'EXPIRED', actions: ['noteFailure'] },
      },
    },
    VERIFIED: {
      on: {
        'leg.settled': [
          { guard: and(['sellerLeg', not('sellerSettled')]), actions: ['recordSettled', { type: 'cancelTimer', params: { name: 'seller_deadline' } }] },
          { guard: and(['feeLeg', 'sellerSettled']), target: 'SETTLED', actions: ['recordSettled', tellListing] },
        ],
        'leg.failed': { guard: and(['feeLeg', 'sellerSettled']), target: 'FEE_FAILED', actions: ['noteFailure'] },
        // The seller was never paid in time: the fee authorization is never used.
        'timer.expired': { guard: and(['deadlineDue', not('sellerSettled')]), target: 'EXPIRED', actions: ['noteFailure'] },
      },
    },
    SETTLED: { type: 'final' },
    EXPIRED: { type: 'final' },
    FEE_FAILED: { type: 'final' },
  },
});
