import type { DurableMachine } from '../kit/durable.ts';
import { invoiceEvents } from './events.ts';
import { invoiceMachine } from './machine.ts';

/** How the runtime hosts invoices: actor kind `invoice`, machine version 1. */
export const invoiceDefinition: DurableMachine<typeof invoiceMachine> = {
  kind: 'invoice',
  version: 1,
  machine: invoiceMachine,
  events: invoiceEvents,
  createEvent: 'invoice.create',
  input: (e) => {
    if (e.type !== 'invoice.create') throw new TypeError(`invoice is created by invoice.create, not ${e.type}`);
    return e;
  },
  status: (s) => String(s.value),
};
