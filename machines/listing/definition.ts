import type { DurableMachine } from '../kit/durable.ts';
import { listingEvents } from './events.ts';
import { listingMachine } from './machine.ts';

/** How the runtime hosts listings: actor kind `listing`, id = resource_id, machine version 1. */
export const listingDefinition: DurableMachine<typeof listingMachine> = {
  kind: 'listing',
  version: 1,
  machine: listingMachine,
  events: listingEvents,
  createEvent: 'listing.register',
  input: (e) => {
    if (e.type !== 'listing.register') throw new TypeError(`listing is created by listing.register, not ${e.type}`);
    return e;
  },
  status: (s) => String(s.value),
};
