import { describe, expect, it } from 'vitest';
import { refundCreate } from './events.ts';

const create = (reason: string | null) => ({
  type: 'refund.create', id: 'e1', at: 1, refund_id: 're_a', payment_intent: 'pay_a', merchant_id: 'mer_a', mode: 'live',
  amount: '1', reason, chain_id: 1, from: 'anm1a', to: 'anm1b', reference: 'rf1:abc',
});

describe('refund.create reason (spec Limits: reason max 300 chars)', () => {
  it('counts characters as code points', () => {
    expect(refundCreate.safeParse(create('😀'.repeat(300))).success).toBe(true);
    expect(refundCreate.safeParse(create('😀'.repeat(301))).success).toBe(false);
    expect(refundCreate.safeParse(create(null)).success).toBe(true);
  });
});
