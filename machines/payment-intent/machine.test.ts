import { initialTransition } from 'xstate';
import { describe, expect, it } from 'vitest';
import { create, replay, step, type PersistedSnapshot } from '../kit/step.ts';
import {
  block,
  cancel,
  createEvent,
  ctxOf,
  dropped,
  FEE,
  included,
  MERCHANT,
  MIN,
  pathTo,
  refund,
  reorged,
  seen,
  T0,
  timer,
  webhookParams,
  webhooks,
} from '../../test/fixtures/payment-intent.ts';
import { paymentIntentDefinition as def } from './definition.ts';
import type { PaymentIntentEvent } from './events.ts';

/** The CREATED snapshot exists only inside the create step; built here to test its exits. */
function createdSnapshot(): PersistedSnapshot {
  const [s] = initialTransition(def.machine, createEvent());
  return JSON.parse(JSON.stringify({ status: s.status, value: s.value, context: s.context })) as PersistedSnapshot;
}

function from(start: string | PaymentIntentEvent[]): PersistedSnapshot {
  if (start === 'CREATED') return createdSnapshot();
  return replay(def, typeof start === 'string' ? pathTo(start) : start);
}

interface Row {
  /** The DESIGN §4 table line (or the brief's decision) the row checks. */
  line: string;
  from: string | PaymentIntentEvent[];
  event: PaymentIntentEvent;
  to: string;
  webhooks: string[];
  reason?: string | null;
  effects?: string[];
}

const L = 40 * MIN; // after the 30-minute expiry, well inside the 24 h window
const c = createEvent();
const overIncluded = [c, seen(T0 + MIN, 'tx1', 'over'), included(T0 + 2 * MIN, { legs: 'over', head: 100 })];

const rows: Row[] = [
  { line: '(new) | create | CREATED → AWAITING_PAYMENT | payment.created', from: 'CREATED', event: createEvent(), to: 'AWAITING_PAYMENT', webhooks: ['payment.created'], effects: ['emitWebhook', 'scheduleTimer'] },

  { line: 'AWAITING_PAYMENT | matching tx seen, legs cover | PAYMENT_DETECTED | payment.detected', from: 'AWAITING_PAYMENT', event: seen(T0 + MIN), to: 'PAYMENT_DETECTED', webhooks: ['payment.detected'] },
  { line: 'EXPIRED¹ | matching tx seen, legs cover | PAYMENT_DETECTED | payment.detected', from: 'EXPIRED', event: seen(T0 + L), to: 'PAYMENT_DETECTED', webhooks: ['payment.detected'] },
  { line: 'FAILED¹ | matching tx seen, legs cover | PAYMENT_DETECTED | payment.detected', from: 'FAILED', event: seen(T0 + 5 * MIN, 'tx2'), to: 'PAYMENT_DETECTED', webhooks: ['payment.detected'] },

  { line: 'AWAITING_PAYMENT | tx included, success, depth < 12 | CONFIRMING | payment.confirming', from: 'AWAITING_PAYMENT', event: included(T0 + MIN, { head: 105 }), to: 'CONFIRMING', webhooks: ['payment.confirming'] },
  { line: 'PAYMENT_DETECTED | tx included, success, depth < 12 | CONFIRMING | payment.confirming', from: 'PAYMENT_DETECTED', event: included(T0 + 2 * MIN), to: 'CONFIRMING', webhooks: ['payment.confirming'] },
  { line: 'EXPIRED¹ | tx included, success, depth < 12 | CONFIRMING | payment.confirming', from: 'EXPIRED', event: included(T0 + L), to: 'CONFIRMING', webhooks: ['payment.confirming'] },
  { line: 'FAILED¹ | tx included, success, depth < 12 | CONFIRMING | payment.confirming', from: 'FAILED', event: included(T0 + 5 * MIN, { tx: 'tx2', height: 101 }), to: 'CONFIRMING', webhooks: ['payment.confirming'] },
  { line: 'decision: included, success, depth already >= 12 | PAID in one step | payment.confirming, payment.confirmed', from: 'PAYMENT_DETECTED', event: included(T0 + 2 * MIN, { head: 111 }), to: 'PAID', webhooks: ['payment.confirming', 'payment.confirmed'] },

  { line: 'any pre-settlement state (AWAITING_PAYMENT) | tx seen, legs short | UNDERPAID | payment.underpaid', from: 'AWAITING_PAYMENT', event: seen(T0 + MIN, 'tx1', 'short'), to: 'UNDERPAID', webhooks: ['payment.underpaid'], reason: 'underpaid by 1 nANM' },
  { line: 'any pre-settlement state (AWAITING_PAYMENT) | tx included, fee leg short | UNDERPAID | payment.underpaid', from: 'AWAITING_PAYMENT', event: included(T0 + MIN, { legs: { merchant_leg: '1000000000', fee_leg: '0' } }), to: 'UNDERPAID', webhooks: ['payment.underpaid'], reason: 'underpaid by 20000000 nANM' },
  { line: 'any pre-settlement state (EXPIRED) | tx seen, legs short | UNDERPAID | payment.underpaid', from: 'EXPIRED', event: seen(T0 + L, 'tx1', 'short'), to: 'UNDERPAID', webhooks: ['payment.underpaid'], reason: 'underpaid by 1 nANM' },
  { line: 'any pre-settlement state (FAILED) | tx included, legs short | UNDERPAID | payment.underpaid', from: 'FAILED', event: included(T0 + 5 * MIN, { tx: 'tx2', legs: 'short' }), to: 'UNDERPAID', webhooks: ['payment.underpaid'], reason: 'underpaid by 1 nANM' },

  { line: 'any pre-settlement state (AWAITING_PAYMENT) | tx seen, legs over | OVERPAID | payment.overpaid', from: 'AWAITING_PAYMENT', event: seen(T0 + MIN, 'tx1', 'over'), to: 'OVERPAID', webhooks: ['payment.overpaid'], reason: 'overpaid by 100000000 nANM' },
  { line: 'any pre-settlement state (AWAITING_PAYMENT) | tx included shallow, legs over | OVERPAID | payment.overpaid', from: 'AWAITING_PAYMENT', event: included(T0 + MIN, { legs: 'over' }), to: 'OVERPAID', webhooks: ['payment.overpaid'], reason: 'overpaid by 100000000 nANM' },
  { line: 'any pre-settlement state (EXPIRED) | tx seen, legs over | OVERPAID | payment.overpaid', from: 'EXPIRED', event: seen(T0 + L, 'tx1', 'over'), to: 'OVERPAID', webhooks: ['payment.overpaid'] },

  { line: 'CONFIRMING | depth reaches 12 | PAID | payment.confirmed', from: 'CONFIRMING', event: block(T0 + 5 * MIN, 111), to: 'PAID', webhooks: ['payment.confirmed'], reason: null },
  { line: 'OVERPAID | depth reaches 12 | PAID | payment.confirmed (reason carries the excess)', from: overIncluded, event: block(T0 + 5 * MIN, 111), to: 'PAID', webhooks: ['payment.confirmed'], reason: 'overpaid by 100000000 nANM' },
  { line: 'OVERPAID (seen) | included at depth 12 | PAID | payment.confirmed', from: 'OVERPAID', event: included(T0 + 5 * MIN, { legs: 'over', head: 120 }), to: 'PAID', webhooks: ['payment.confirmed'], reason: 'overpaid by 100000000 nANM' },
  { line: 'decision: CONFIRMING | depth grows below 12 | CONFIRMING, confirmations tracked | none', from: 'CONFIRMING', event: block(T0 + 5 * MIN, 105), to: 'CONFIRMING', webhooks: [] },

  { line: 'any state with a matched tx (PAYMENT_DETECTED) | receipt failed | FAILED | payment.failed', from: 'PAYMENT_DETECTED', event: included(T0 + 2 * MIN, { receipt: 'failed' }), to: 'FAILED', webhooks: ['payment.failed'] },
  { line: 'any state with a matched tx (CONFIRMING) | receipt failed | FAILED | payment.failed', from: 'CONFIRMING', event: included(T0 + 3 * MIN, { receipt: 'failed', height: 102, blockHash: 'blk102b' }), to: 'FAILED', webhooks: ['payment.failed'] },
  { line: 'any state with a matched tx (OVERPAID) | receipt failed | FAILED | payment.failed', from: 'OVERPAID', event: included(T0 + 2 * MIN, { legs: 'over', receipt: 'failed' }), to: 'FAILED', webhooks: ['payment.failed'] },
  { line: 'any state with a matched tx (UNDERPAID) | receipt failed | FAILED | payment.failed', from: 'UNDERPAID', event: included(T0 + 2 * MIN, { legs: 'short', receipt: 'failed' }), to: 'FAILED', webhooks: ['payment.failed'] },
  { line: 'decision: AWAITING_PAYMENT | tx included with failed receipt | FAILED | payment.failed', from: 'AWAITING_PAYMENT', event: included(T0 + MIN, { receipt: 'failed' }), to: 'FAILED', webhooks: ['payment.failed'] },

  { line: 'AWAITING_PAYMENT | expiry timer (default 30 min) | EXPIRED | payment.expired', from: 'AWAITING_PAYMENT', event: timer(T0 + 30 * MIN), to: 'EXPIRED', webhooks: ['payment.expired'], reason: null },

  { line: 'CREATED | cancel | EXPIRED | payment.expired (reason canceled)', from: 'CREATED', event: cancel(T0), to: 'EXPIRED', webhooks: ['payment.expired'], reason: 'canceled', effects: ['cancelTimer', 'emitWebhook'] },
  { line: 'AWAITING_PAYMENT | cancel | EXPIRED | payment.expired (reason canceled)', from: 'AWAITING_PAYMENT', event: cancel(T0 + MIN), to: 'EXPIRED', webhooks: ['payment.expired'], reason: 'canceled', effects: ['cancelTimer', 'emitWebhook'] },

  { line: 'PAID | reorg removes the settling tx | AWAITING_PAYMENT | payment.reorged', from: 'PAID', event: reorged(T0 + 10 * MIN, 'tx1', 99), to: 'AWAITING_PAYMENT', webhooks: ['payment.reorged'], reason: 'block 100 holding transaction tx1 was removed by a reorg (head 99)', effects: ['emitWebhook', 'scheduleTimer'] },
  { line: 'PARTIALLY_REFUNDED | reorg removes the settling tx | AWAITING_PAYMENT | payment.reorged', from: 'PARTIALLY_REFUNDED', event: reorged(T0 + 70 * MIN), to: 'AWAITING_PAYMENT', webhooks: ['payment.reorged'] },
  { line: 'REFUNDED | reorg removes the settling tx | AWAITING_PAYMENT | payment.reorged', from: 'REFUNDED', event: reorged(T0 + 70 * MIN), to: 'AWAITING_PAYMENT', webhooks: ['payment.reorged'] },

  { line: 'pre-settlement states (PAYMENT_DETECTED) | reorg removes the tx | AWAITING_PAYMENT | none', from: 'PAYMENT_DETECTED', event: reorged(T0 + 2 * MIN), to: 'AWAITING_PAYMENT', webhooks: [], effects: ['scheduleTimer'] },
  { line: 'pre-settlement states (CONFIRMING) | reorg removes the tx | AWAITING_PAYMENT | none', from: 'CONFIRMING', event: reorged(T0 + 3 * MIN), to: 'AWAITING_PAYMENT', webhooks: [], effects: ['scheduleTimer'] },
  { line: 'pre-settlement states (OVERPAID) | reorg removes the tx | AWAITING_PAYMENT | none', from: overIncluded, event: reorged(T0 + 3 * MIN), to: 'AWAITING_PAYMENT', webhooks: [] },
  { line: 'pre-settlement states (UNDERPAID) | mempool drop removes the tx | AWAITING_PAYMENT | none', from: 'UNDERPAID', event: dropped(T0 + 3 * MIN), to: 'AWAITING_PAYMENT', webhooks: [] },
  { line: 'pre-settlement states (PAYMENT_DETECTED) | mempool drop removes the tx | AWAITING_PAYMENT | none', from: 'PAYMENT_DETECTED', event: dropped(T0 + 3 * MIN), to: 'AWAITING_PAYMENT', webhooks: [] },

  { line: 'PAID | a refund reaches CONFIRMED, below cap | PARTIALLY_REFUNDED | —', from: 'PAID', event: refund(T0 + 60 * MIN, '1'), to: 'PARTIALLY_REFUNDED', webhooks: [] },
  { line: 'PAID | a refund reaches CONFIRMED, sum = cap | REFUNDED | —', from: 'PAID', event: refund(T0 + 60 * MIN, MERCHANT), to: 'REFUNDED', webhooks: [] },
  { line: 'PARTIALLY_REFUNDED | a refund reaches CONFIRMED, below cap | PARTIALLY_REFUNDED | —', from: 'PARTIALLY_REFUNDED', event: refund(T0 + 61 * MIN, '1'), to: 'PARTIALLY_REFUNDED', webhooks: [] },
  { line: 'PARTIALLY_REFUNDED | a refund reaches CONFIRMED, sum = cap | REFUNDED | —', from: 'PARTIALLY_REFUNDED', event: refund(T0 + 61 * MIN, '880000000'), to: 'REFUNDED', webhooks: [] },
];

describe('payment intent transitions (DESIGN §4 table)', () => {
  it.each(rows.map((r) => [r.line, r] as const))('%s', (_line, r) => {
    const start = from(r.from);
    const res = step(def, start, r.event);
    expect(res.accepted).toBe(true);
    expect(res.status).toBe(r.to);
    expect(webhooks(res)).toEqual(r.webhooks);
    for (const w of webhookParams(res)) expect(w.created).toBe(r.event.at);
    if (r.reason !== undefined) expect(webhookParams(res).at(-1)?.data.reason).toBe(r.reason);
    if (r.effects) expect(res.effects.map((e) => e.type)).toEqual(r.effects);
  });
});

/** Events a state does not accept: nothing changes and the kit reports accepted=false. */
const refused: Array<[string, string | PaymentIntentEvent[], PaymentIntentEvent]> = [
  ['cancel: other states answer 409 not_cancellable (PAYMENT_DETECTED)', 'PAYMENT_DETECTED', cancel(T0 + 2 * MIN)],
  ['cancel: other states answer 409 not_cancellable (PAID)', 'PAID', cancel(T0 + 10 * MIN)],
  ['cancel: other states answer 409 not_cancellable (EXPIRED)', 'EXPIRED', cancel(T0 + L)],
  ['one tx per intent: another tx is ignored in CONFIRMING', 'CONFIRMING', included(T0 + 3 * MIN, { tx: 'tx2', head: 120 })],
  ['one tx per intent: UNDERPAID is terminal for matching', 'UNDERPAID', seen(T0 + 3 * MIN, 'tx2')],
  ['one tx per intent: a reorg of another tx does not touch PAID', 'PAID', reorged(T0 + 10 * MIN, 'tx2')],
  ['late payments only inside the monitoring window', 'EXPIRED', seen(T0 + 30 * MIN + 24 * 60 * MIN + 1)],
  ['FAILED watches no longer than the window', 'FAILED', seen(T0 + 30 * MIN + 24 * 60 * MIN + 1, 'tx2')],
  ['a duplicate failed inclusion is not news in FAILED', 'FAILED', included(T0 + 3 * MIN, { receipt: 'failed' })],
  ['expiry only from AWAITING_PAYMENT (PAYMENT_DETECTED)', 'PAYMENT_DETECTED', timer(T0 + 30 * MIN)],
  ['an early (stale) expiry firing is ignored', 'AWAITING_PAYMENT', timer(T0 + 29 * MIN)],
  ['PAID never happens below the required depth', 'CONFIRMING', block(T0 + 3 * MIN, 101)],
  ['confirmations are not tracked once settled', 'PAID', block(T0 + 10 * MIN, 130)],
  ['a refund above the cap is refused', 'PAID', refund(T0 + 60 * MIN, '980000001')],
  ['refunds only from PAID or PARTIALLY_REFUNDED', 'CONFIRMING', refund(T0 + 60 * MIN, '1')],
  ['a refund id counts once', 'PARTIALLY_REFUNDED', refund(T0 + 61 * MIN, '1', 're_1')],
  ['REFUNDED takes no further refund', 'REFUNDED', refund(T0 + 61 * MIN, '1')],
  ['a settled tx is not dropped from the mempool', 'PAID', dropped(T0 + 10 * MIN)],
];

describe('events a state does not accept', () => {
  it.each(refused)('%s', (_line, start, event) => {
    const snap = from(start);
    const res = step(def, snap, event);
    expect(res.accepted).toBe(false);
    expect(res.snapshot).toEqual(snap);
    expect(res.effects).toEqual([]);
  });
});

describe('decisions behind the table', () => {
  it('create: anm_amount is split 98/2 and the expiry timer is scheduled at expires_at', () => {
    const res = create(def, createEvent());
    expect(ctxOf(res.snapshot)).toMatchObject({ anm_amount: '1000000000', merchant_amount: MERCHANT, protocol_fee: FEE });
    expect(res.effects[1]).toEqual({ type: 'scheduleTimer', params: { name: 'expiry', at: T0 + 30 * MIN, event: 'timer.expired' } });
  });

  it('a reorg of a settlement re-opens the intent: tx cleared, expiry at max(expires_at, at + 30 min)', () => {
    const res = step(def, from('PAID'), reorged(T0 + 20 * MIN));
    const ctx = ctxOf(res.snapshot);
    expect(ctx).toMatchObject({ tx: null, confirmations: 0, completed_at: null, expires_at: T0 + 50 * MIN });
    expect(res.effects.at(-1)).toEqual({ type: 'scheduleTimer', params: { name: 'expiry', at: T0 + 50 * MIN, event: 'timer.expired' } });
    const data = webhookParams(res)[0]?.data;
    expect(data).toMatchObject({ status: 'AWAITING_PAYMENT', transaction_hash: 'tx1', confirmations: 0 });
  });

  it('payment.confirmed once per settlement: a second only after payment.reorged', () => {
    let snap = from('PAID');
    snap = step(def, snap, reorged(T0 + 10 * MIN)).snapshot;
    const again = step(def, snap, included(T0 + 11 * MIN, { height: 101, head: 112 }));
    expect(webhooks(again)).toEqual(['payment.confirming', 'payment.confirmed']);
    expect(step(def, again.snapshot, included(T0 + 12 * MIN, { height: 101, head: 113 })).accepted).toBe(false);
  });

  it('refund cap includes the overpaid excess that reached the merchant', () => {
    const paid = replay(def, [...overIncluded, block(T0 + 5 * MIN, 111)]);
    expect(step(def, paid, refund(T0 + 60 * MIN, '1080000001')).accepted).toBe(false);
    expect(step(def, paid, refund(T0 + 60 * MIN, '1080000000')).status).toBe('REFUNDED');
  });

  it('a late payment after cancel settles (a transfer already signed can still arrive)', () => {
    const canceled = step(def, from('AWAITING_PAYMENT'), cancel(T0 + MIN)).snapshot;
    const res = step(def, canceled, included(T0 + 2 * MIN, { head: 111 }));
    expect(res.status).toBe('PAID');
  });

  it('confirmations follow head - block_height + 1 while not settled', () => {
    const res = step(def, from('CONFIRMING'), block(T0 + 4 * MIN, 107));
    expect(ctxOf(res.snapshot).confirmations).toBe(8);
  });
});
