import { describe, expect, it } from 'vitest';
import { restore, step, type PersistedSnapshot } from '../kit/step.ts';
import { block, cancel, included, MIN, refund, reorged, seen, T0, timer } from '../../test/fixtures/payment-intent.ts';
import awaitingPayment from '../../test/fixtures/snapshots/payment_intent/1/awaiting_payment.json' with { type: 'json' };
import confirming from '../../test/fixtures/snapshots/payment_intent/1/confirming.json' with { type: 'json' };
import expired from '../../test/fixtures/snapshots/payment_intent/1/expired.json' with { type: 'json' };
import failed from '../../test/fixtures/snapshots/payment_intent/1/failed.json' with { type: 'json' };
import overpaid from '../../test/fixtures/snapshots/payment_intent/1/overpaid.json' with { type: 'json' };
import paid from '../../test/fixtures/snapshots/payment_intent/1/paid.json' with { type: 'json' };
import partiallyRefunded from '../../test/fixtures/snapshots/payment_intent/1/partially_refunded.json' with { type: 'json' };
import paymentDetected from '../../test/fixtures/snapshots/payment_intent/1/payment_detected.json' with { type: 'json' };
import refunded from '../../test/fixtures/snapshots/payment_intent/1/refunded.json' with { type: 'json' };
import underpaid from '../../test/fixtures/snapshots/payment_intent/1/underpaid.json' with { type: 'json' };
import awaitingV2 from '../../test/fixtures/snapshots/payment_intent/2/awaiting_payment.json' with { type: 'json' };
import confirmingV2 from '../../test/fixtures/snapshots/payment_intent/2/confirming.json' with { type: 'json' };
import paidV2 from '../../test/fixtures/snapshots/payment_intent/2/paid.json' with { type: 'json' };
import paidV3 from '../../test/fixtures/snapshots/payment_intent/3/paid.json' with { type: 'json' };
import partiallyRefundedV3 from '../../test/fixtures/snapshots/payment_intent/3/partially_refunded.json' with { type: 'json' };
import refundedV3 from '../../test/fixtures/snapshots/payment_intent/3/refunded.json' with { type: 'json' };
import { paymentIntentDefinition as def } from './definition.ts';
import type { PaymentIntentEvent } from './events.ts';

/**
 * Snapshots persisted by machine version 1 (test/fixtures/snapshots/payment_intent/1/) must
 * restore under the current code and keep moving: a released version's actors live on in
 * the database. These files are frozen; a change that breaks them needs version 2.
 */

const T = T0 + 60 * MIN;
const golden: Array<[string, unknown, string, PaymentIntentEvent, string]> = [
  ['awaiting_payment.json', awaitingPayment, 'AWAITING_PAYMENT', seen(T), 'PAYMENT_DETECTED'],
  ['payment_detected.json', paymentDetected, 'PAYMENT_DETECTED', included(T, { head: 105 }), 'CONFIRMING'],
  ['confirming.json', confirming, 'CONFIRMING', block(T, 111), 'PAID'],
  ['overpaid.json', overpaid, 'OVERPAID', included(T, { legs: 'over', head: 111 }), 'PAID'],
  ['underpaid.json', underpaid, 'UNDERPAID', included(T, { legs: 'short', receipt: 'failed' }), 'FAILED'],
  ['failed.json', failed, 'FAILED', seen(T, 'tx2'), 'PAYMENT_DETECTED'],
  ['expired.json', expired, 'EXPIRED', included(T, { head: 111 }), 'PAID'],
  ['paid.json', paid, 'PAID', refund(T, '1'), 'PARTIALLY_REFUNDED'],
  ['partially_refunded.json', partiallyRefunded, 'PARTIALLY_REFUNDED', reorged(T), 'AWAITING_PAYMENT'],
  ['refunded.json', refunded, 'REFUNDED', reorged(T), 'AWAITING_PAYMENT'],
];

describe('golden snapshots, payment_intent v1', () => {
  it('the current version is 3; v1 snapshots (no chain positions) are still hosted', () => expect(def.version).toBe(3));

  it.each(golden)('%s restores as %s and still steps', (_file, json, status, event, next) => {
    const snap = json as PersistedSnapshot;
    expect(def.status(restore(def, snap))).toBe(status);
    const res = step(def, snap, event);
    expect(res.accepted).toBe(true);
    expect(res.status).toBe(next);
  });

  it('a restored snapshot still refuses what its state refuses', () => {
    expect(step(def, paid as PersistedSnapshot, cancel(T)).accepted).toBe(false);
    expect(step(def, awaitingPayment as PersistedSnapshot, timer(T0 + 30 * MIN)).status).toBe('EXPIRED');
  });
});

/**
 * Version 2 (ADR 0016) adds the chain positions to the context: `chain_mark`, `chain_depth`
 * and `tx.pos`. These files are frozen like v1's.
 */
describe('golden snapshots, payment_intent v2', () => {
  const pos = (e: PaymentIntentEvent, p: number, inclusion?: number) => ({ ...e, pos: p, ...(inclusion !== undefined && { inclusion }) }) as PaymentIntentEvent;
  const v2: Array<[string, unknown, string, PaymentIntentEvent, string]> = [
    // confirming.json kept a depth report (position 9) for an inclusion at position 7 it had not heard of.
    ['confirming.json', confirmingV2, 'CONFIRMING', pos(included(T, { head: 104, blockHash: 'blk100b' }), 7), 'CONFIRMING'],
    ['confirming.json (stale)', confirmingV2, 'CONFIRMING', pos(reorged(T), 3), 'CONFIRMING'],
    ['paid.json', paidV2, 'PAID', pos(included(T, { head: 112, blockHash: 'blk100b' }), 8), 'PAID'],
    ['awaiting_payment.json', awaitingV2, 'AWAITING_PAYMENT', pos(seen(T), 13), 'PAYMENT_DETECTED'],
  ];
  it.each(v2)('%s restores as %s and still steps', (name, json, status, event, next) => {
    const snap = json as PersistedSnapshot;
    expect(def.status(restore(def, snap))).toBe(status);
    const res = step(def, snap, event);
    expect(res.accepted).toBe(!name.endsWith('(stale)'));
    expect(res.status).toBe(next);
  });
});

/**
 * Version 3 (ADR 0033) adds `refund_marks`: per refund, the newest numbered outcome applied.
 * paid.json holds re_a reverted (outcome 2) and re_b; refunded.json re_a re-confirmed (3).
 */
describe('golden snapshots, payment_intent v3', () => {
  const HALF = '490000000';
  const outcome = (type: string, refundId: string, seq: number) => ({ type, id: `${type}:${refundId}:${seq}:g`, at: T, refund_id: refundId, amount: HALF, seq }) as PaymentIntentEvent;
  const v3: Array<[string, unknown, string, PaymentIntentEvent, string]> = [
    ['paid.json', paidV3, 'PAID', outcome('refund.confirmed', 're_a', 3), 'PARTIALLY_REFUNDED'],
    ['paid.json (stale)', paidV3, 'PAID', outcome('refund.confirmed', 're_a', 1), 'PAID'],
    ['partially_refunded.json', partiallyRefundedV3, 'PARTIALLY_REFUNDED', outcome('refund.reverted', 're_a', 2), 'PAID'],
    ['refunded.json', refundedV3, 'REFUNDED', outcome('refund.released', 're_a', 4), 'PARTIALLY_REFUNDED'],
    ['refunded.json (stale)', refundedV3, 'REFUNDED', outcome('refund.reverted', 're_a', 2), 'REFUNDED'],
  ];
  it.each(v3)('%s restores as %s and still steps', (name, json, status, event, next) => {
    const snap = json as PersistedSnapshot;
    expect(def.status(restore(def, snap))).toBe(status);
    const res = step(def, snap, event);
    expect(res.accepted).toBe(!name.endsWith('(stale)'));
    expect(res.status).toBe(next);
  });
});
