import { describe, expect, it } from 'vitest';
import { create, step, type StepResult } from '../kit/step.ts';
import { paymentIntentDefinition as def } from './definition.ts';
import type { PaymentIntentEvent } from './events.ts';
import { createEvent, ctxOf, pathTo, refund, T0, MERCHANT } from '../../test/fixtures/payment-intent.ts';

function paid(): StepResult {
  const [first, ...rest] = [createEvent(), ...pathTo('PAID').slice(1)];
  let r: StepResult = create(def, first);
  for (const e of rest) r = step(def, r.snapshot, e);
  return r;
}
const reserve = (refundId: string, amount: string): PaymentIntentEvent => ({
  type: 'refund.reserve',
  id: `reserve:${refundId}`,
  at: T0 + 1,
  refund_id: refundId,
  amount,
  refund_create: { type: 'refund.create', id: `create:${refundId}`, at: T0 + 1 },
});
const released = (refundId: string, amount: string): PaymentIntentEvent => ({ type: 'refund.released', id: `rel:${refundId}`, at: T0 + 2, refund_id: refundId, amount });
const apply = (r: StepResult, e: PaymentIntentEvent) => step(def, r.snapshot, e);

// DESIGN §4 Refunds: remaining = cap − all refunds not FAILED/CANCELED; above it: refused.
describe('refund holds on the payment intent (DESIGN §4 Refunds)', () => {
  it('a reservation within the remainder is held and creates the refund actor through the outbox', () => {
    const r = apply(paid(), reserve('re_a', '400000000'));
    expect(r.accepted).toBe(true);
    expect(ctxOf(r.snapshot).refund_holds).toHaveLength(1);
    expect(r.effects).toEqual([{ type: 'sendTo', params: { kind: 'refund', actorId: 're_a', event: { type: 'refund.create', id: 'create:re_a', at: T0 + 1 } } }]);
  });

  it('a reservation above the remainder (held refunds count) is not accepted', () => {
    const a = apply(paid(), reserve('re_a', '600000000'));
    expect(apply(a, reserve('re_b', '380000001')).accepted).toBe(false);
    expect(apply(a, reserve('re_b', '380000000')).accepted).toBe(true);
    expect(apply(paid(), reserve('re_c', String(BigInt(MERCHANT) + 1n))).accepted).toBe(false);
  });

  it('a released hold gives the amount back; a confirmed one becomes a refund', () => {
    const a = apply(paid(), reserve('re_a', MERCHANT));
    expect(apply(a, reserve('re_b', '1')).accepted).toBe(false);
    const freed = apply(a, released('re_a', MERCHANT));
    expect(apply(freed, reserve('re_b', '1')).accepted).toBe(true);
    const done = apply(a, refund(T0 + 3, MERCHANT, 're_a'));
    expect(done.status).toBe('REFUNDED');
    expect(ctxOf(done.snapshot).refund_holds).toEqual([]);
  });

  it('a reservation before settlement is refused (not refundable)', () => {
    const r = create(def, createEvent());
    expect(apply(r, reserve('re_a', '1')).accepted).toBe(false);
  });
});
