import { assertEvent, assign, setup } from 'xstate';
import { effectActions } from '../kit/effects.ts';
import { contextFrom } from '../kit/durable.ts';
import { initialLinkContext, OVERSOLD_NAMED, type PaymentLinkContext } from './context.ts';
import type { PaymentLinkCreateEvent, PaymentLinkEvent } from './events.ts';
import * as rules from './rules.ts';

/**
 * A payment link (`plink_…`): ACTIVE until deactivated. For a limited link it is the one
 * counter of units: a take becomes a hold actor (`hold_…`, machines/link-hold) through a
 * `sendTo` written in the same transaction, and the hold reports back how it ended. Units are
 * never counted by looking at intents (DESIGN §7).
 */
type Ctx = PaymentLinkContext;
type Args = { context: Ctx; event: PaymentLinkEvent };

/** The hold actor, created in the take's own transaction (its id names the fact, so a re-drive is a duplicate). */
const createHold = {
  type: 'sendTo' as const,
  params: ({ context, event }: Args) => {
    assertEvent(event, 'link.hold.take');
    return {
      kind: 'link_hold',
      actorId: event.hold_id,
      event: {
        type: 'hold.create',
        id: `hold.create:${event.hold_id}`,
        at: event.at,
        hold_id: event.hold_id,
        link_id: context.link_id,
        merchant_id: context.merchant_id,
        mode: context.mode,
        intent_id: event.intent_id,
        expires_at: event.expires_at,
      },
    };
  },
};
const verdict = (type: 'hold.reclaimed' | 'hold.oversold') => ({
  type: 'sendTo' as const,
  params: ({ event }: Args) => {
    assertEvent(event, 'link.hold.reclaim');
    return { kind: 'link_hold', actorId: event.hold_id, event: { type, id: `${type}:${event.hold_id}`, at: event.at } };
  },
});

const pl = setup({
  types: { context: {} as Ctx, events: {} as PaymentLinkEvent, input: {} as PaymentLinkCreateEvent },
  actions: {
    ...effectActions,
    hold: assign({ units_held: ({ context }) => context.units_held + 1 }),
    release: assign({ units_held: ({ context }) => context.units_held - 1 }),
    consume: assign({ units_held: ({ context }) => context.units_held - 1, units_sold: ({ context }) => context.units_sold + 1 }),
    sellAgain: assign({ units_sold: ({ context }) => context.units_sold + 1 }),
    oversell: assign(({ context, event }) => {
      assertEvent(event, 'link.hold.reclaim');
      const named = context.oversold_holds.length < OVERSOLD_NAMED ? [...context.oversold_holds, event.hold_id] : context.oversold_holds;
      return { units_oversold: context.units_oversold + 1, oversold_holds: named };
    }),
    deactivate: assign({ deactivated_at: ({ event }) => event.at }),
  },
  guards: {
    unitLeft: ({ context }) => rules.unitLeft(context),
    holdOutstanding: ({ context }) => rules.holdOutstanding(context),
  },
});

// Holds already taken end the same way whether the link is active or not.
const holdReports = {
  'link.hold.release': { guard: 'holdOutstanding' as const, actions: ['release' as const] },
  'link.hold.consume': { guard: 'holdOutstanding' as const, actions: ['consume' as const] },
  'link.hold.reclaim': [
    { guard: 'unitLeft' as const, actions: ['sellAgain' as const, verdict('hold.reclaimed')] },
    { actions: ['oversell' as const, verdict('hold.oversold')] },
  ],
};

export const paymentLinkMachine = pl.createMachine({
  id: 'payment_link',
  initial: 'NEW',
  context: contextFrom(initialLinkContext),
  states: {
    NEW: { on: { 'link.create': { target: 'ACTIVE' } } },
    ACTIVE: {
      on: {
        // Not accepted when no unit is left: the caller reads "ignored" as sold out.
        'link.hold.take': { guard: 'unitLeft', actions: ['hold', createHold] },
        'link.deactivate': { target: 'INACTIVE', actions: ['deactivate'] },
        ...holdReports,
      },
    },
    INACTIVE: { on: { ...holdReports } },
  },
});
