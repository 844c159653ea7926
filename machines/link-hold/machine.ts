import { assertEvent, assign, setup } from 'xstate';
import { effectActions } from '../kit/effects.ts';
import { contextFrom } from '../kit/durable.ts';
import { initialHoldContext, type LinkHoldContext } from './context.ts';
import type { LinkHoldCreateEvent, LinkHoldEvent } from './events.ts';
import * as rules from './rules.ts';

/**
 * One unit of a limited payment link held for one buyer (`hold_…`): HELD → CONSUMED when its
 * intent is PAID, RELEASED when the intent ends unpaid or the 30-minute timer fires. A payment
 * that arrives after the release asks the link for a unit again: CONSUMED if one was left,
 * else OVERSOLD (the payment stands; the merchant refunds). Every move out of HELD tells the
 * link exactly once, so the link's counts are exact.
 */
type Ctx = LinkHoldContext;
type Args = { context: Ctx; event: LinkHoldEvent };

const toLink = (type: 'link.hold.release' | 'link.hold.consume' | 'link.hold.reclaim') => ({
  type: 'sendTo' as const,
  params: ({ context, event }: Args) => ({
    kind: 'payment_link',
    actorId: context.link_id,
    event: { type, id: `${type}:${context.hold_id}`, at: event.at, hold_id: context.hold_id },
  }),
});
const holdTimer = { type: 'scheduleTimer' as const, params: ({ context }: Args) => ({ name: 'hold', at: context.expires_at, event: 'timer.expired' }) };
const cancelHoldTimer = { type: 'cancelTimer' as const, params: { name: 'hold' } };

const lh = setup({
  types: { context: {} as Ctx, events: {} as LinkHoldEvent, input: {} as LinkHoldCreateEvent },
  actions: {
    ...effectActions,
    noteRelease: assign(({ event }) => {
      assertEvent(event, ['intent.ended', 'timer.expired']);
      return { released_reason: event.type === 'intent.ended' ? event.reason : 'expired', ended_at: event.at };
    }),
    end: assign({ ended_at: ({ event }) => event.at, reclaiming: false }),
    askAgain: assign({ reclaiming: true }),
  },
  guards: {
    holdDue: ({ event }) => rules.holdDue(event),
    mayReclaim: ({ context }) => rules.mayReclaim(context),
    awaitingVerdict: ({ context }) => rules.awaitingVerdict(context),
  },
});

export const linkHoldMachine = lh.createMachine({
  id: 'link_hold',
  initial: 'NEW',
  context: contextFrom(initialHoldContext),
  states: {
    NEW: { on: { 'hold.create': { target: 'HELD', actions: [holdTimer] } } },
    HELD: {
      exit: [cancelHoldTimer],
      on: {
        'intent.paid': { target: 'CONSUMED', actions: ['end', toLink('link.hold.consume')] },
        'intent.ended': { target: 'RELEASED', actions: ['noteRelease', toLink('link.hold.release')] },
        'timer.expired': { guard: 'holdDue', target: 'RELEASED', actions: ['noteRelease', toLink('link.hold.release')] },
      },
    },
    // Released, but the intent is still watched for a late payment (DESIGN §4 monitoring window).
    RELEASED: {
      on: {
        'intent.paid': { guard: 'mayReclaim', actions: ['askAgain', toLink('link.hold.reclaim')] },
        'hold.reclaimed': { guard: 'awaitingVerdict', target: 'CONSUMED', actions: ['end'] },
        'hold.oversold': { guard: 'awaitingVerdict', target: 'OVERSOLD', actions: ['end'] },
      },
    },
    CONSUMED: {},
    OVERSOLD: {},
  },
});
