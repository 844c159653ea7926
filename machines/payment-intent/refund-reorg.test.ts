import { describe, expect, it } from 'vitest';
import { create, step, type StepResult } from '../kit/step.ts';
import { refunded } from './rules.ts';
import { paymentIntentDefinition as def } from './definition.ts';
import type { PaymentIntentEvent } from './events.ts';
import { block, ctxOf, included, MERCHANT, MIN, pathTo, refund, reorged, reserve, seen, T0, timer } from '../../test/fixtures/payment-intent.ts';

/**
 * A refund's outcome reaches its intent once (the refund actor's `refund.confirmed` /
 * `refund.released`, sent through the outbox). A reorg may have taken the intent's payment off
 * the chain meanwhile (DESIGN §4 "Payment intent transitions": settled → AWAITING_PAYMENT),
 * yet the refund's transfer is on the chain: the intent records it in whatever state it is in,
 * and once the payment settles again its status says what was refunded
 * (DESIGN §4: PAID / PARTIALLY_REFUNDED / REFUNDED by sum = cap). ADR 0023.
 */
const T = T0 + 60 * MIN;
const released = (refundId: string, amount: string): PaymentIntentEvent => ({ type: 'refund.released', id: `rel:${refundId}`, at: T, refund_id: refundId, amount });

function run(events: PaymentIntentEvent[]): StepResult {
  const [first, ...rest] = events;
  let r: StepResult = create(def, first!);
  for (const e of rest) r = step(def, r.snapshot, e);
  return r;
}
const apply = (r: StepResult, e: PaymentIntentEvent) => step(def, r.snapshot, e);

/** PAID with a refund of `amount` held, then its block reorged away. */
const heldThenReorged = (amount: string) => [...pathTo('PAID'), reserve('re_a', amount), reorged(T + 1, 'tx1', 105)];
const HALF = '490000000';

// Each non-settled state a reorged intent can be in when its refund's outcome arrives.
const afterReorg: Array<[string, PaymentIntentEvent[]]> = [
  ['AWAITING_PAYMENT', []],
  ['PAYMENT_DETECTED', [seen(T + 2)]],
  ['CONFIRMING', [included(T + 2, { head: 103, blockHash: 'blk100b' })]],
  ['OVERPAID', [seen(T + 2, 'tx2', 'over')]],
  ['UNDERPAID', [seen(T + 2, 'tx2', 'short')]],
  ['FAILED', [included(T + 2, { tx: 'tx2', receipt: 'failed' })]],
  ['EXPIRED', [timer(T + 2 * 60 * MIN)]],
];

describe('refund outcomes while the payment is reorged (DESIGN §4 Refunds, ADR 0023)', () => {
  it.each(afterReorg)('%s records refund.confirmed: the refund is counted and its hold ends', (status, path) => {
    const before = run([...heldThenReorged(HALF), ...path]);
    expect(before.status).toBe(status);
    const r = apply(before, refund(T + 3 * 60 * MIN, HALF, 're_a'));
    expect(r.accepted).toBe(true);
    expect(r.status).toBe(status);
    expect(refunded(ctxOf(r.snapshot))).toBe(BigInt(HALF));
    expect(ctxOf(r.snapshot).refund_holds).toEqual([]);
    // Counted once, however often it is delivered.
    expect(apply(r, refund(T + 3 * 60 * MIN, HALF, 're_a')).accepted).toBe(false);
  });

  it.each(afterReorg)('%s records refund.released: the held amount is free again', (status, path) => {
    const r = apply(run([...heldThenReorged(HALF), ...path]), released('re_a', HALF));
    expect(r.accepted).toBe(true);
    expect(r.status).toBe(status);
    expect(ctxOf(r.snapshot).refund_holds).toEqual([]);
  });

  it('a partial refund confirmed while reorged: the payment settling again is PARTIALLY_REFUNDED', () => {
    const r = run([...heldThenReorged(HALF), refund(T + 2, HALF, 're_a'), included(T + 3, { head: 111, blockHash: 'blk100b' })]);
    expect(r.status).toBe('PARTIALLY_REFUNDED');
    expect(refunded(ctxOf(r.snapshot))).toBe(BigInt(HALF));
    const rest = String(BigInt(MERCHANT) - BigInt(HALF));
    expect(apply(r, reserve('re_b', String(BigInt(rest) + 1n))).accepted).toBe(false);
    expect(apply(r, reserve('re_b', rest)).accepted).toBe(true);
  });

  it('a full refund confirmed while reorged: the payment settling again (via CONFIRMING) is REFUNDED', () => {
    const r = run([...heldThenReorged(MERCHANT), refund(T + 2, MERCHANT, 're_a'), included(T + 3, { head: 101, blockHash: 'blk100b' }), block(T + 4, 111)]);
    expect(r.status).toBe('REFUNDED');
    expect(refunded(ctxOf(r.snapshot))).toBe(BigInt(MERCHANT));
  });

  it('a refund confirmed before the reorg: the payment settling again keeps PARTIALLY_REFUNDED / REFUNDED', () => {
    const partly = run([...pathTo('PARTIALLY_REFUNDED'), reorged(T + 1, 'tx1', 105), included(T + 2, { head: 111, blockHash: 'blk100b' })]);
    expect(partly.status).toBe('PARTIALLY_REFUNDED');
    const fully = run([...pathTo('REFUNDED'), reorged(T + 1, 'tx1', 105), included(T + 2, { head: 111, blockHash: 'blk100b' })]);
    expect(fully.status).toBe('REFUNDED');
  });

  it('a settled, refunded payment re-included in another block is reorged and settles again with its refunds', () => {
    const moved = { ...included(T + 2, { head: 111, blockHash: 'blk100b' }), pos: 20 };
    const r = run([...pathTo('PARTIALLY_REFUNDED'), moved]);
    expect(r.status).toBe('PARTIALLY_REFUNDED');
    expect(r.effects.filter((e) => e.type === 'emitWebhook').map((e) => e.params.type)).toEqual(['payment.reorged', 'payment.confirming', 'payment.confirmed']);
  });

  it('a confirmation of a refund the intent never reserved is not counted outside PAID / PARTIALLY_REFUNDED', () => {
    expect(apply(run(heldThenReorged(HALF)), refund(T + 2, HALF, 're_other')).accepted).toBe(false);
  });

  it('an intent that never settled has nothing to refund: refund.reserve is still refused after a reorg', () => {
    expect(apply(run(heldThenReorged(HALF)), reserve('re_b', '1')).accepted).toBe(false);
  });
});
