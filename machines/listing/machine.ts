import { assertEvent, assign, setup } from 'xstate';
import { contextFrom } from '../kit/durable.ts';
import { effectActions } from '../kit/effects.ts';
import { fieldsOf, initialListingContext, ownerGeneration, scanOf, type ListingContext } from './context.ts';
import type { ListingEvent, ListingRegisterEvent } from './events.ts';
import * as rules from './rules.ts';
import { recordExecution, recordProbe } from './score.ts';

type Args = { context: ListingContext; event: ListingEvent };

/** The one probe timer of a listing; its firing is `listing.probe_due`. */
export const PROBE_TIMER = 'probe';

/**
 * One actor per listed resource (`res_…`). A new or changed listing is `unverified` until
 * the scanner sees a conformant 402; probe results then move it between `verified`,
 * `degraded` and `offline` (DESIGN §5 "Scanner"). The machine never probes: the probe timer
 * fires `listing.probe_due`, the runtime probes after that commit and sends `listing.probed`.
 */
const listing = setup({
  types: { context: {} as ListingContext, events: {} as ListingEvent, input: {} as ListingRegisterEvent },
  actions: {
    ...effectActions,
    update: assign(({ context, event }) => {
      assertEvent(event, 'listing.update');
      // New terms must be seen conforming again; the availability history stays.
      return { ...fieldsOf(event), updated_at: event.at, scan: { ...scanOf(context), verified: false } };
    }),
    count: assign(({ context, event }) => {
      assertEvent(event, 'listing.purchase_settled');
      // The last 1,000 intents are enough to absorb redeliveries; older ones cannot come back.
      return { transactions: context.transactions + 1, counted: [...context.counted.slice(-999), event.intent_id] };
    }),
    record: assign(({ context, event }) => {
      assertEvent(event, 'listing.probed');
      return { scan: recordProbe(scanOf(context), rules.probeEntry(event), event.next_probe_in_ms, event.x402_version, event.seller_offers) };
    }),
    takeOver: assign(({ context, event }) => {
      assertEvent(event, 'listing.take_over');
      // Counted, not timed: two ownerships begun in one millisecond, or A -> B -> A, stay apart (ADR 0077).
      // An event from the previous release names no generation and keeps the count, as that
      // release did: its journal then replays to the snapshot it wrote (no field, read as 0).
      if (event.previous_owner_generation === undefined) {
        return { ...fieldsOf(event), updated_at: event.at, owner_since: event.at, scan: rules.scanAfterTakeover(context, event) };
      }
      const owner_generation = ownerGeneration(context) + 1;
      return { ...fieldsOf(event), updated_at: event.at, owner_since: event.at, owner_generation, scan: rules.scanAfterTakeover(context, event) };
    }),
    executed: assign(({ context, event }) => {
      assertEvent(event, 'listing.executed');
      return { scan: recordExecution(scanOf(context), event.ok) };
    }),
  },
  guards: {
    sameProvider: ({ context, event }) => rules.sameProvider(context, event),
    newSettlement: ({ context, event }) => rules.newSettlement(context, event),
    toOffline: ({ context, event }) => rules.statusAfterProbe(context, event) === 'offline',
    toVerified: ({ context, event }) => rules.statusAfterProbe(context, event) === 'verified',
    toDegraded: ({ context, event }) => rules.statusAfterProbe(context, event) === 'degraded',
    toUnverified: ({ context, event }) => rules.statusAfterProbe(context, event) === 'unverified',
    takeoverToVerified: ({ context, event }) => rules.statusAfterTakeover(context, event) === 'verified',
    takeoverToDegraded: ({ context, event }) => rules.statusAfterTakeover(context, event) === 'degraded',
    takeoverToUnverified: ({ context, event }) => rules.statusAfterTakeover(context, event) === 'unverified',
  },
});

/** The first round (of a new listing, or of one whose rounds resume), after the runtime's jitter. */
const firstProbe = {
  type: 'scheduleTimer' as const,
  params: ({ event }: Args) => ({
    name: PROBE_TIMER,
    at: event.at + (event.type === 'listing.register' || event.type === 'listing.resume_probes' ? (event.probe_in_ms ?? 0) : 0),
    event: 'listing.probe_due',
  }),
};
/**
 * A due round schedules the next one at once, a full interval on, so a probe lost with its
 * process leaves the listing scheduled; the probe's result moves it to interval + jitter.
 */
const keepScheduled = { type: 'scheduleTimer' as const, params: ({ context, event }: Args) => ({ name: PROBE_TIMER, at: event.at + scanOf(context).interval_ms, event: 'listing.probe_due' }) };
const nextProbe = {
  type: 'scheduleTimer' as const,
  params: ({ event }: Args) => ({ name: PROBE_TIMER, at: event.at + (event.type === 'listing.probed' ? event.next_probe_in_ms : 0), event: 'listing.probe_due' }),
};
const probed = ['record' as const, nextProbe];

/** The same events in every state after registration; only where a probe leads differs. */
const scanned = {
  'listing.update': { guard: 'sameProvider' as const, target: '#listing.unverified', actions: ['update' as const] },
  'listing.purchase_settled': { guard: 'newSettlement' as const, actions: ['count' as const] },
  'listing.executed': { actions: ['executed' as const] },
  'listing.probe_due': { actions: [keepScheduled] },
  // Sent only for a listing without a probe timer; one that has one is rescheduled, never doubled (one row per name).
  'listing.resume_probes': { actions: [firstProbe] },
  'listing.probed': [
    { guard: 'toOffline' as const, target: '#listing.offline', actions: probed },
    { guard: 'toVerified' as const, target: '#listing.verified', actions: probed },
    { guard: 'toDegraded' as const, target: '#listing.degraded', actions: probed },
    { guard: 'toUnverified' as const, target: '#listing.unverified', actions: probed },
  ],
  // The takeover's probe answered, so it never leads to `offline`.
  'listing.take_over': [
    { guard: 'takeoverToVerified' as const, target: '#listing.verified', actions: ['takeOver' as const] },
    { guard: 'takeoverToDegraded' as const, target: '#listing.degraded', actions: ['takeOver' as const] },
    { guard: 'takeoverToUnverified' as const, target: '#listing.unverified', actions: ['takeOver' as const] },
  ],
};

export const listingMachine = listing.createMachine({
  id: 'listing',
  initial: 'new',
  context: contextFrom(initialListingContext),
  states: {
    new: { on: { 'listing.register': { target: 'unverified', actions: [firstProbe] } } },
    unverified: { on: scanned },
    verified: { on: scanned },
    degraded: { on: scanned },
    offline: { on: scanned },
  },
});
