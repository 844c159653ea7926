import type { DurableMachine } from '../kit/durable.ts';
import { linkHoldEvents } from './events.ts';
import { linkHoldMachine } from './machine.ts';

/** How the runtime hosts unit holds: actor kind `link_hold`, id `hold_…`, machine version 1. */
export const linkHoldDefinition: DurableMachine<typeof linkHoldMachine> = {
  kind: 'link_hold',
  version: 1,
  machine: linkHoldMachine,
  events: linkHoldEvents,
  createEvent: 'hold.create',
  input: (e) => {
    if (e.type !== 'hold.create') throw new TypeError(`link_hold is created by hold.create, not ${e.type}`);
    return e;
  },
  status: (s) => String(s.value),
};
