import { assertEvent, assign, setup } from 'xstate';
import { contextFrom } from '../kit/durable.ts';
import { effectActions } from '../kit/effects.ts';
import { fieldsOf, initialListingContext, type ListingContext } from './context.ts';
import type { ListingEvent, ListingRegisterEvent } from './events.ts';
import * as rules from './rules.ts';

/**
 * One actor per listed resource (`res_…`). A new or changed listing is `unverified` until
 * the scanner has probed it (DESIGN §5 "Listings"); the scanner's states `verified`,
 * `degraded` and `offline` join here when it lands.
 */
const listing = setup({
  types: { context: {} as ListingContext, events: {} as ListingEvent, input: {} as ListingRegisterEvent },
  actions: {
    ...effectActions,
    update: assign(({ event }) => {
      assertEvent(event, 'listing.update');
      return { ...fieldsOf(event), updated_at: event.at };
    }),
    count: assign(({ context, event }) => {
      assertEvent(event, 'listing.purchase_settled');
      // The last 1,000 intents are enough to absorb redeliveries; older ones cannot come back.
      return { transactions: context.transactions + 1, counted: [...context.counted.slice(-999), event.intent_id] };
    }),
  },
  guards: {
    sameProvider: ({ context, event }) => rules.sameProvider(context, event),
    newSettlement: ({ context, event }) => rules.newSettlement(context, event),
  },
});

const settled = { 'listing.purchase_settled': { guard: 'newSettlement' as const, actions: ['count' as const] } };

export const listingMachine = listing.createMachine({
  id: 'listing',
  initial: 'new',
  context: contextFrom(initialListingContext),
  states: {
    new: { on: { 'listing.register': { target: 'unverified' } } },
    unverified: {
      on: {
        'listing.update': { guard: 'sameProvider', target: 'unverified', reenter: true, actions: ['update'] },
        ...settled,
      },
    },
  },
});
