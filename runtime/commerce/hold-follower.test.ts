import { describe, expect, it } from 'vitest';
import type { WebhookFact } from '../webhooks/intake.ts';
import { holdEventsOf } from './hold-follower.ts';

const H1 = `hold_${'a'.repeat(24)}`;
const H2 = `hold_${'b'.repeat(24)}`;

const fact = (type: string, metadata: Record<string, unknown>, extra: Record<string, unknown> = {}): WebhookFact => ({
  merchant: 'mer_1',
  mode: 'test',
  actor_id: 'pay_1',
  kind: 'payment_intent',
  event: { id: 'evt_1', type, created: 1_700_000_000, data: { metadata, ...extra } },
});

describe('holdEventsOf (DESIGN §7: a hold follows its intent)', () => {
  it('a Pay page intent names one hold: payment.confirmed is intent.paid for it', () => {
    expect(holdEventsOf(fact('payment.confirmed', { hold: H1 }))).toEqual([{ holdId: H1, event: { type: 'intent.paid', id: 'intent:evt_1', at: 1_700_000_000_000 } }]);
  });

  it('a till cart names several holds (ADR 0048): each gets the fact, once, under the same id', () => {
    const out = holdEventsOf(fact('payment.expired', { source: 'pos', holds: [H1, H2, H1] }, { reason: 'canceled' }));
    expect(out.map((o) => o.holdId)).toEqual([H1, H2]);
    expect(out.every((o) => o.event.type === 'intent.ended' && o.event.reason === 'canceled' && o.event.id === 'intent:evt_1')).toBe(true);
  });

  it('ignores facts without holds, malformed hold ids and facts a hold does not care about', () => {
    expect(holdEventsOf(fact('payment.confirmed', { source: 'pos' }))).toEqual([]);
    expect(holdEventsOf(fact('payment.confirmed', { holds: ['hold_x', 7] }))).toEqual([]);
    expect(holdEventsOf(fact('payment.detected', { holds: [H1] }))).toEqual([]);
  });
});
