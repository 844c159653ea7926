import type { DurableMachine } from '../kit/durable.ts';
import { paymentLinkEvents } from './events.ts';
import { paymentLinkMachine } from './machine.ts';

/** How the runtime hosts payment links: actor kind `payment_link`, id `plink_…`, machine version 1. */
export const paymentLinkDefinition: DurableMachine<typeof paymentLinkMachine> = {
  kind: 'payment_link',
  version: 1,
  machine: paymentLinkMachine,
  events: paymentLinkEvents,
  createEvent: 'link.create',
  input: (e) => {
    if (e.type !== 'link.create') throw new TypeError(`payment_link is created by link.create, not ${e.type}`);
    return e;
  },
  status: (s) => String(s.value),
};
