import { describe, expect, it } from 'vitest';
import { intentStoryProblems, refundStoryProblems, type Fact, type Story } from './webhook-story.ts';

/**
 * The story checks the multi-process chain tests rely on must bite: each row is a sequence of
 * facts (type, status, step) with the journal's states, and whether the check accepts it.
 */
const STATUS: Record<string, string> = {
  'payment.created': 'AWAITING_PAYMENT',
  'payment.detected': 'PAYMENT_DETECTED',
  'payment.confirming': 'CONFIRMING',
  'payment.confirmed': 'PAID',
  'payment.reorged': 'AWAITING_PAYMENT',
  'refund.created': 'REQUIRES_SIGNATURE',
  'refund.completed': 'CONFIRMED',
};

/** `steps`: per journal step, its state_after and the facts it queued. */
function story(steps: Array<[string, string[]]>, tx = 'tx1'): Story {
  const facts: Fact[] = [];
  const states = new Map<number, string>();
  steps.forEach(([state, types], k) => {
    states.set(k + 1, state);
    types.forEach((type, i) => facts.push({ type, status: STATUS[type]!, tx: type === 'payment.created' || type === 'refund.created' ? null : tx, seq: k + 1, i }));
  });
  return { facts, states };
}

describe('payment intent facts against the chain story (spec Webhooks 3; DESIGN §4 transitions)', () => {
  const rows: Array<[string, Array<[string, string[]]>, string, boolean]> = [
    ['settled once', [['AWAITING_PAYMENT', ['payment.created']], ['PAID', ['payment.confirming', 'payment.confirmed']]], 'PAID', true],
    ['reorged and settled again in one step (ADR 0016)', [['AWAITING_PAYMENT', ['payment.created']], ['PAID', ['payment.confirmed']], ['PAID', ['payment.reorged', 'payment.confirming', 'payment.confirmed']]], 'PAID', true],
    ['reorged, dropped, ends AWAITING_PAYMENT', [['AWAITING_PAYMENT', ['payment.created']], ['PAID', ['payment.confirmed']], ['AWAITING_PAYMENT', ['payment.reorged']]], 'AWAITING_PAYMENT', true],
    ['refunds move PAID on without a fact', [['AWAITING_PAYMENT', ['payment.created']], ['PAID', ['payment.confirmed']], ['REFUNDED', []]], 'REFUNDED', true],
    ['issue 27: PAID with a reorg never followed by a confirmation', [['AWAITING_PAYMENT', ['payment.created']], ['PAID', ['payment.confirmed']], ['AWAITING_PAYMENT', ['payment.reorged']], ['PAID', []]], 'PAID', false],
    ['a reorg without a settlement', [['AWAITING_PAYMENT', ['payment.created']], ['AWAITING_PAYMENT', ['payment.reorged']]], 'AWAITING_PAYMENT', false],
    ['confirmed twice without a reorg between', [['AWAITING_PAYMENT', ['payment.created']], ['PAID', ['payment.confirmed']], ['PAID', ['payment.confirmed']]], 'PAID', false],
    ['a fact for a state the step never reached', [['AWAITING_PAYMENT', ['payment.created']], ['CONFIRMING', ['payment.confirmed']]], 'CONFIRMING', false],
    ['a step whose last fact is not the state it ended in', [['AWAITING_PAYMENT', ['payment.created', 'payment.detected']]], 'AWAITING_PAYMENT', false],
    ['a pre-settlement loss returns to AWAITING_PAYMENT quietly', [['AWAITING_PAYMENT', ['payment.created']], ['CONFIRMING', ['payment.confirming']], ['AWAITING_PAYMENT', []]], 'AWAITING_PAYMENT', true],
    ['the last fact disagrees with the final state', [['AWAITING_PAYMENT', ['payment.created']], ['PAYMENT_DETECTED', ['payment.detected']], ['CONFIRMING', []]], 'CONFIRMING', false],
    ['a reorg after another fact of its step', [['AWAITING_PAYMENT', ['payment.created']], ['PAID', ['payment.confirmed']], ['AWAITING_PAYMENT', ['payment.confirming', 'payment.reorged']]], 'AWAITING_PAYMENT', false],
  ];
  it.each(rows)('%s', (_name, steps, final, ok) => {
    expect(intentStoryProblems(story(steps), final, 'tx1').length === 0).toBe(ok);
  });

  it('a fact from a step the journal does not have', () => {
    const s = story([['AWAITING_PAYMENT', ['payment.created']], ['PAID', ['payment.confirmed']]]);
    s.states.delete(2);
    expect(intentStoryProblems(s, 'PAID', 'tx1')).toEqual(['facts payment.confirmed from step 2, which the journal does not have']);
  });

  it('a fact naming another transaction than the payment', () => {
    expect(intentStoryProblems(story([['AWAITING_PAYMENT', ['payment.created']], ['PAID', ['payment.confirmed']]], 'tx2'), 'PAID', 'tx1')).toEqual(['payment.confirmed names tx2, not the payment tx1']);
  });
});

describe('refund facts against the chain story (refund.created, refund.completed)', () => {
  const rows: Array<[string, Array<[string, string[]]>, string, boolean]> = [
    ['completed once, last', [['REQUIRES_SIGNATURE', ['refund.created']], ['CONFIRMING', []], ['CONFIRMED', ['refund.completed']]], 'CONFIRMED', true],
    ['open, nothing completed', [['REQUIRES_SIGNATURE', ['refund.created']], ['CONFIRMING', []], ['SUBMITTED', []]], 'SUBMITTED', true],
    ['CONFIRMED without refund.completed', [['REQUIRES_SIGNATURE', ['refund.created']], ['CONFIRMED', []]], 'CONFIRMED', false],
    ['completed but the refund is back to signing', [['REQUIRES_SIGNATURE', ['refund.created']], ['CONFIRMED', ['refund.completed']], ['REQUIRES_SIGNATURE', []]], 'REQUIRES_SIGNATURE', false],
    ['completed twice', [['REQUIRES_SIGNATURE', ['refund.created']], ['CONFIRMED', ['refund.completed']], ['CONFIRMED', ['refund.completed']]], 'CONFIRMED', false],
  ];
  it.each(rows)('%s', (_name, steps, final, ok) => {
    expect(refundStoryProblems(story(steps), final, 'tx1').length === 0).toBe(ok);
  });
});
