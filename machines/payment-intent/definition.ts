import type { DurableMachine } from '../kit/durable.ts';
import { paymentIntentEvents } from './events.ts';
import { paymentIntentMachine } from './machine.ts';

/**
 * How the runtime hosts payment intents: actor kind `payment_intent`, machine version 3
 * (numbered refund outcomes, a reverted refund un-counted, ADR 0033; version 2 added positional
 * chain signals, ADR 0016). Version 1 and 2 snapshots restore as they are.
 */
export const paymentIntentDefinition: DurableMachine<typeof paymentIntentMachine> = {
  kind: 'payment_intent',
  version: 3,
  machine: paymentIntentMachine,
  events: paymentIntentEvents,
  createEvent: 'intent.create',
  input: (e) => {
    if (e.type !== 'intent.create') throw new TypeError(`payment_intent is created by intent.create, not ${e.type}`);
    return e;
  },
  // The top-level state name is the public status (every state is atomic).
  status: (s) => String(s.value),
};
