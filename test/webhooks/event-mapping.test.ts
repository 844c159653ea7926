import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { webhookEventId } from '../../runtime/engine/webhook-id.ts';
import { Engine } from '../../runtime/engine/runtime.ts';
import { machineRegistry } from '../../runtime/machines.ts';
import { WebhookRuntime } from '../../runtime/webhooks/service.ts';
import { backendFactories, waitFor, type Backend } from '../helpers/backends.ts';
import { block, createEvent, included, MERCHANT, MIN, reorged, seen } from '../fixtures/payment-intent.ts';
import { endpointFor } from './harness.ts';
import { verifyIndependently } from './independent-verifier.ts';
import { Receiver } from './receiver.ts';

/**
 * The full life of an intent through the real machines, engine, outbox, bus, intake and
 * worker to an HTTP receiver: created, detected, confirming, confirmed, reorged, confirmed
 * again, refunded. Each fact is delivered exactly once, with the spec's data, and a re-drive
 * of every event and every webhook fact delivers nothing more.
 */
const PAYMENT_KEYS = [
  'amount_nanm', 'block_height', 'confirmations', 'currency', 'id', 'merchant_amount', 'merchant_order_id', 'metadata', 'mode',
  'payment_reference', 'protocol_fee', 'protocol_fee_bps', 'reason', 'required_confirmations', 'status', 'transaction_hash',
];
const REFUND_KEYS = ['amount', 'amount_formatted', 'block_hash', 'block_height', 'id', 'metadata', 'mode', 'payment_intent', 'reason', 'status', 'transaction_hash'];

describe.each(backendFactories)('webhook event mapping on %s', (_name, open) => {
  let b: Backend;
  let rx: Receiver;
  let engine: Engine;
  let webhooks: WebhookRuntime;
  beforeEach(async () => {
    b = await open();
    rx = await Receiver.start();
    engine = new Engine({ db: b.db, bus: b.bus, registry: machineRegistry() });
    await engine.start();
    webhooks = new WebhookRuntime(b.db, b.bus, { allowPrivate: true, worker: { pollMs: 50 } });
    await webhooks.start();
  });
  afterEach(async () => {
    await webhooks.stop();
    await engine.stop();
    await rx.close();
    await b.close();
  });

  it('create → detected → confirming → confirmed → reorged → confirming → confirmed → refund: each type once per fact', async () => {
    const { secret } = await endpointFor(b, 'mer_1', rx.url, 'live');
    // Wall-clock based: the runtime's timer sweeper must not find the expiry due.
    const t = Date.now();
    const intent = { kind: 'payment_intent', id: 'pay_test1', merchant: 'mer_1', mode: 'live' as const };
    const refund = { kind: 'refund', id: 're_1', merchant: 'mer_1', mode: 'live' as const };
    const refundLegs = { tx_hash: 'rtx1', from: 'anm1merchant', merchant_leg: '500000000', fee_leg: '0' };
    const steps: Array<[typeof intent | typeof refund, Record<string, unknown>]> = [
      [intent, { ...createEvent({ at: t, expires_at: t + 30 * MIN }) }],
      [intent, { ...seen(t + 1 * MIN) }],
      [intent, { ...included(t + 2 * MIN, { height: 100, head: 101 }) }],
      [intent, { ...block(t + 3 * MIN, 111) }],
      [intent, { ...reorged(t + 4 * MIN, 'tx1', 99) }],
      [intent, { ...included(t + 5 * MIN, { height: 101, head: 102, blockHash: 'blk101b' }) }],
      [intent, { ...block(t + 6 * MIN, 112) }],
      [refund, {
        type: 'refund.create', id: 'rc1', at: t + 7 * MIN, refund_id: 're_1', payment_intent: 'pay_test1', merchant_id: 'mer_1', mode: 'live',
        amount: '500000000', reason: 'returned', chain_id: 1, from: 'anm1merchant', to: 'anm1customer', reference: 'rf1:abcdefgh', metadata: { order: 42 },
      }],
      [refund, { type: 'refund.submitted', id: 'rs1', at: t + 8 * MIN, tx_hash: 'rtx1' }],
      [refund, { type: 'chain.tx.included', id: 'ri1', at: t + 9 * MIN, ...refundLegs, block_height: 120, block_hash: 'r120', receipt: 'success', head: 121 }],
      [refund, { type: 'chain.block', id: 'rb1', at: t + 10 * MIN, head: 131 }],
    ];
    for (const [target, event] of steps) expect((await engine.host.apply(target, event)).outcome).toBe('applied');
    // The refund tells the intent through the bus; the intent records it without a webhook.
    await waitFor(async () => (await b.db.query<{ state: string }>(`SELECT state FROM actors WHERE id = 'pay_test1'`)).rows[0]?.state === 'PARTIALLY_REFUNDED', 15_000, 'intent refunded');
    await waitFor(async () => rx.received.length >= 9, 15_000, 'nine deliveries');

    // Re-drive everything: every event again, and every webhook fact again on the bus.
    for (const [target, event] of steps) expect((await engine.host.apply(target, event)).outcome).toBe('duplicate');
    const facts = await b.db.query<{ payload: unknown }>(`SELECT payload FROM outbox WHERE subject LIKE 'fx.webhook.%' ORDER BY id`);
    expect(facts.rows).toHaveLength(9);
    for (const [i, f] of facts.rows.entries()) await b.bus.publish('fx.webhook.live', f.payload, { msgId: `redrive:${i}` });
    await new Promise((r) => setTimeout(r, 1_000));

    const got = [...rx.received].sort((x, y) => x.body.created - y.body.created);
    expect(got.map((r) => r.body.type)).toEqual([
      'payment.created',
      'payment.detected',
      'payment.confirming',
      'payment.confirmed',
      'payment.reorged',
      'payment.confirming',
      'payment.confirmed',
      'refund.created',
      'refund.completed',
    ]);
    expect(new Set(got.map((r) => r.eventId)).size).toBe(9);
    // `created` is when the fact happened; refund submitted and included (steps 8, 9) emit nothing.
    expect(got.map((r) => r.body.created)).toEqual(steps.filter((_s, i) => i !== 8 && i !== 9).map(([, e]) => Math.floor((e.at as number) / 1000)));
    for (const r of got) {
      expect(verifyIndependently({ rawBody: r.rawBody, headers: r.headers, secret, nowSeconds: Math.floor(Date.now() / 1000) })).toMatchObject({ ok: true });
      // The id names the fact: (merchant, type, data).
      expect(r.body.id).toBe(webhookEventId('mer_1', r.body.type, r.body.data));
      expect(r.body.data.metadata).toEqual({ order: 42 });
      expect(Object.keys(r.body.data).sort()).toEqual(r.body.type.startsWith('payment.') ? PAYMENT_KEYS : REFUND_KEYS);
    }
    const data = got.map((r) => r.body.data);
    expect(data.map((d) => d.status)).toEqual(['AWAITING_PAYMENT', 'PAYMENT_DETECTED', 'CONFIRMING', 'PAID', 'AWAITING_PAYMENT', 'CONFIRMING', 'PAID', 'REQUIRES_SIGNATURE', 'CONFIRMED']);
    expect(data[0]).toMatchObject({ id: 'pay_test1', mode: 'live', currency: 'ANM', merchant_order_id: 'order-42', amount_nanm: '1000000000', merchant_amount: MERCHANT, protocol_fee: '20000000', protocol_fee_bps: 200, transaction_hash: null, block_height: null, reason: null });
    expect(data[3]).toMatchObject({ transaction_hash: 'tx1', block_height: 100, confirmations: 12, required_confirmations: 12 });
    expect(typeof data[4]!.reason).toBe('string');
    expect(data[6]).toMatchObject({ transaction_hash: 'tx1', block_height: 101, confirmations: 12 });
    expect(data[7]).toMatchObject({ id: 're_1', payment_intent: 'pay_test1', amount: '500000000', amount_formatted: '0.5 ANM', reason: 'returned', transaction_hash: null, mode: 'live' });
    expect(data[8]).toMatchObject({ id: 're_1', status: 'CONFIRMED', transaction_hash: 'rtx1' });
  });
});
