import type { DurableMachine } from '../kit/durable.ts';
import { refundEvents } from './events.ts';
import { refundMachine } from './machine.ts';

/**
 * How the runtime hosts refunds: actor kind `refund`, machine version 3 (a confirmed refund
 * follows a deep reorg back, numbered outcomes, ADR 0033; version 2 added positional chain
 * signals, ADR 0016). Version 1 and 2 snapshots restore as they are.
 */
export const refundDefinition: DurableMachine<typeof refundMachine> = {
  kind: 'refund',
  version: 3,
  machine: refundMachine,
  events: refundEvents,
  createEvent: 'refund.create',
  input: (e) => {
    if (e.type !== 'refund.create') throw new TypeError(`refund is created by refund.create, not ${e.type}`);
    return e;
  },
  status: (s) => String(s.value),
};
