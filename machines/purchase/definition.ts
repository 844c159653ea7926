import type { DurableMachine } from '../kit/durable.ts';
import { purchaseEvents } from './events.ts';
import { purchaseMachine } from './machine.ts';

/** How the runtime hosts purchases: actor kind `purchase`, id = intent_id, machine version 1. */
export const purchaseDefinition: DurableMachine<typeof purchaseMachine> = {
  kind: 'purchase',
  version: 1,
  machine: purchaseMachine,
  events: purchaseEvents,
  createEvent: 'purchase.quote',
  input: (e) => {
    if (e.type !== 'purchase.quote') throw new TypeError(`purchase is created by purchase.quote, not ${e.type}`);
    return e;
  },
  status: (s) => String(s.value),
};
