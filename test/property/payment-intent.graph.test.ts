import { getShortestPaths } from '@xstate/graph';
import { describe, expect, it } from 'vitest';
import { paymentIntentDefinition as def } from '../../machines/payment-intent/definition.ts';
import type { PaymentIntentEvent } from '../../machines/payment-intent/events.ts';
import { PAYMENT_INTENT_STATUSES } from '../../machines/payment-intent/view.ts';
import { block, cancel, createEvent, dropped, included, MERCHANT, MIN, refund, reorged, seen, T0, timer } from '../fixtures/payment-intent.ts';

/**
 * Graph traversal of the statechart with concrete events: every one of the spec's 11 states
 * must be reachable, and the shortest way there must not break the settlement rule.
 */

const AT = T0 + 40 * MIN; // past the default expiry, inside the late-payment window

function eventsFor(state: { context: { expires_at: number } }): PaymentIntentEvent[] {
  return [
    createEvent({ at: T0 }),
    cancel(AT),
    timer(state.context.expires_at),
    seen(AT, 'tx1', 'exact'),
    seen(AT, 'tx1', 'short'),
    seen(AT, 'tx1', 'over'),
    included(AT, { tx: 'tx1', head: 100 }),
    included(AT, { tx: 'tx1', head: 111 }),
    included(AT, { tx: 'tx1', receipt: 'failed' }),
    included(AT, { tx: 'tx2', legs: 'over', head: 100 }),
    block(AT, 111),
    reorged(AT, 'tx1'),
    reorged(AT, 'tx2'),
    dropped(AT, 'tx1'),
    refund(AT, '100000000', 're_1'),
    refund(AT, '880000000', 're_2'),
    refund(AT, MERCHANT, 're_3'),
  ];
}

describe('payment intent statechart (@xstate/graph)', () => {
  const paths = getShortestPaths(def.machine, {
    input: createEvent({ at: T0 }),
    events: eventsFor,
    // Coarse identity keeps the graph small: state, matched tx and depth, refunds, deadline.
    serializeState: (s) =>
      JSON.stringify([s.value, s.context.tx?.hash, s.context.tx?.receipt, s.context.confirmations, s.context.refunds.length, s.context.expires_at]),
  });
  // Several graph vertices share a state value; keep the shortest way into each value.
  const reached = new Map<string, (typeof paths)[number]>();
  for (const p of paths) {
    const k = String(p.state.value);
    if ((reached.get(k)?.steps.length ?? Infinity) > p.steps.length) reached.set(k, p);
  }

  it.each(PAYMENT_INTENT_STATUSES.map((s) => [s]))('reaches %s', (status) => {
    expect(reached.has(status), `no path to ${status}`).toBe(true);
  });

  it('every path into a settled state passes a successful inclusion at depth', () => {
    for (const p of paths) {
      if (!['PAID', 'PARTIALLY_REFUNDED', 'REFUNDED'].includes(String(p.state.value))) continue;
      expect(p.state.context.tx?.receipt).toBe('success');
      expect(p.state.context.confirmations).toBeGreaterThanOrEqual(p.state.context.required_confirmations);
    }
  });

  it('shortest path to PAID goes create → included at depth', () => {
    expect(reached.get('PAID')?.steps.map((s) => s.event.type)).toEqual(['xstate.init', 'intent.create', 'chain.tx.included']);
  });
});
