import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { getDelivery, redeliver } from '../../runtime/webhooks/deliveries.ts';
import { rotateSecret, setEndpoint } from '../../runtime/webhooks/endpoints.ts';
import { WebhookError } from '../../runtime/webhooks/errors.ts';
import { WebhookIntake, type WebhookFact } from '../../runtime/webhooks/intake.ts';
import { backendFactories, waitFor, type Backend } from '../helpers/backends.ts';
import { deliveryStatuses, endpointFor, startStack, waitForStatus, type Stack } from './harness.ts';
import { verifyIndependently } from './independent-verifier.ts';
import { Receiver, type Received } from './receiver.ts';

const now = () => Math.floor(Date.now() / 1000);

/** Every delivery a test saw must pass the independent verifier with one of the secrets. */
function expectAllVerified(received: Received[], secrets: string[]): void {
  for (const r of received) {
    const ok = secrets.some((secret) => verifyIndependently({ rawBody: r.rawBody, headers: r.headers, secret, nowSeconds: now() }).ok);
    expect(ok, `delivery of ${r.eventId} verifies`).toBe(true);
  }
}

describe.each(backendFactories)('webhook delivery on %s', (_name, open) => {
  let b: Backend;
  let rx: Receiver;
  let stack: Stack | undefined;
  beforeEach(async () => {
    b = await open();
    rx = await Receiver.start();
  });
  afterEach(async () => {
    rx.release();
    await stack?.stop();
    stack = undefined;
    await rx.close();
    await b.close();
  });

  it('delivers each fact once, signed per the spec; the independent verifier accepts each and rejects forgeries', async () => {
    const ep = await endpointFor(b, 'm_a', rx.url);
    stack = await startStack(b);
    const ids = await stack.order('m_a', 'o1', 5);
    await waitFor(async () => rx.received.length >= 6, 15_000, 'six deliveries');
    await waitForStatus(b, 'm_a', { succeeded: 6 });
    expect(new Set(rx.ids())).toEqual(new Set(ids));
    expect(rx.received).toHaveLength(6);
    expectAllVerified(rx.received, [ep.secret]);
    for (const r of rx.received) {
      // Spec "Delivery headers" and "Event envelope".
      expect(r.signature).toMatch(/^v1=[0-9a-f]{64}$/);
      expect(r.eventId).toMatch(/^evt_[0-9a-f]+$/);
      expect(Math.abs(Number(r.timestamp) - now())).toBeLessThanOrEqual(5);
      expect(r.headers['content-type']).toBe('application/json');
      expect(Object.keys(r.body)).toEqual(['id', 'type', 'created', 'data']);
      expect(r.body.id).toBe(r.eventId);
      expect(Number.isInteger(r.body.created)).toBe(true);
    }
    const sample = rx.received[0]!;
    const reject = (rawBody: Buffer, headers = sample.headers, secret = ep.secret, at = now()) => verifyIndependently({ rawBody, headers, secret, nowSeconds: at });
    // Tampered body.
    expect(reject(Buffer.from(sample.rawBody.toString().replace('"order.', '"orders.')))).toMatchObject({ ok: false });
    // Wrong secret.
    expect(reject(sample.rawBody, sample.headers, 'whsec_not-the-secret')).toMatchObject({ ok: false });
    // Stale: more than 300 s from the delivery timestamp, either way.
    expect(reject(sample.rawBody, sample.headers, ep.secret, Number(sample.timestamp) + 301)).toEqual({ ok: false, reason: 'stale timestamp' });
    expect(reject(sample.rawBody, sample.headers, ep.secret, Number(sample.timestamp) - 301)).toEqual({ ok: false, reason: 'stale timestamp' });
    expect(reject(sample.rawBody, sample.headers, ep.secret, Number(sample.timestamp) + 300)).toMatchObject({ ok: true });
    // Re-serialised JSON: same data, other bytes.
    const parsed = JSON.parse(sample.rawBody.toString()) as Record<string, unknown>;
    for (const reserialised of [JSON.stringify(parsed, null, 2), JSON.stringify({ data: parsed.data, created: parsed.created, type: parsed.type, id: parsed.id })]) {
      expect(reserialised).not.toBe(sample.rawBody.toString());
      expect(reject(Buffer.from(reserialised))).toMatchObject({ ok: false, reason: 'no matching signature' });
    }
    // Another event id in the header with this body's signature.
    expect(reject(sample.rawBody, { ...sample.headers, 'service-event-id': 'evt_00' })).toMatchObject({ ok: false });

    // The attempt log: one 2xx attempt per delivery with latency and excerpt.
    const { rows } = await b.db.query<{ status: number; latency_ms: number; response: string; attempt: number }>(
      `SELECT a.status, a.latency_ms, a.response, a.attempt FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery WHERE d.merchant = 'm_a'`,
    );
    expect(rows).toHaveLength(6);
    expect(rows.every((r) => r.status === 200 && r.attempt === 1 && r.response === 'ok' && r.latency_ms >= 0)).toBe(true);
  });

  it('rotation: both secrets sign during the grace period, then only the new one', async () => {
    const ep = await endpointFor(b, 'm_r', rx.url);
    // The worker's clock is moved past the grace rather than the grace waited out: a grace short
    // enough to wait for could end before the first delivery on a slow machine. The jump stays
    // within the receiver's 300 s timestamp tolerance.
    const graceMs = 60_000;
    let ahead = 0;
    const clock = () => Date.now() + ahead;
    stack = await startStack(b, { now: clock });
    const at = clock();
    const rot = await rotateSecret(b.db, { merchant: 'm_r', mode: 'test', graceMs }, at);
    expect(rot.secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    expect(rot.secret).not.toBe(ep.secret);
    expect(rot.previous_secrets_expire_at).toBe(new Date(at + graceMs).toISOString());
    await stack.order('m_r', 'r1');
    await waitFor(async () => rx.received.length >= 1, 10_000, 'delivery during the grace');
    const during = rx.received[0]!;
    expect(during.signature.split(',')).toHaveLength(2);
    for (const secret of [ep.secret, rot.secret!]) {
      expect(verifyIndependently({ rawBody: during.rawBody, headers: during.headers, secret, nowSeconds: now() })).toMatchObject({ ok: true });
    }
    ahead = graceMs + 1_000;
    await stack.order('m_r', 'r2');
    await waitFor(async () => rx.received.length >= 2, 10_000, 'delivery after the grace');
    const after = rx.received[1]!;
    expect(after.signature.split(',')).toHaveLength(1);
    expect(verifyIndependently({ rawBody: after.rawBody, headers: after.headers, secret: rot.secret!, nowSeconds: now() })).toMatchObject({ ok: true });
    expect(verifyIndependently({ rawBody: after.rawBody, headers: after.headers, secret: ep.secret, nowSeconds: now() })).toMatchObject({ ok: false });
  });

  it('events of a merchant with no endpoint are recorded as skipped; a later endpoint gets only new events', async () => {
    stack = await startStack(b);
    const early = await stack.order('m_s', 's1', 2);
    await waitFor(async () => (await b.db.query(`SELECT 1 FROM webhook_events WHERE merchant = 'm_s' AND skipped`)).rowCount === 3, 10_000, 'skipped events');
    await endpointFor(b, 'm_s', rx.url);
    const later = await stack.order('m_s', 's2');
    await waitForStatus(b, 'm_s', { succeeded: 1 });
    await new Promise((r) => setTimeout(r, 300));
    expect(rx.ids()).toEqual(later);
    expect(rx.ids().some((id) => early.includes(id))).toBe(false);
  });

  it('a re-driven fact (same event id, new bus message) is delivered once', async () => {
    await endpointFor(b, 'm_d', rx.url);
    stack = await startStack(b);
    const fact: WebhookFact = { merchant: 'm_d', mode: 'test', actor_id: 'x1', kind: 'order', event: { id: 'evt_0123456789abcdef', type: 'order.created', created: now(), data: { id: 'x1' } } };
    await b.bus.publish('fx.webhook.test', fact, { msgId: 'x1:1:0' });
    await b.bus.publish('fx.webhook.test', fact, { msgId: 'x1:9:0' }); // not deduped by the bus
    await waitForStatus(b, 'm_d', { succeeded: 1 });
    await new WebhookIntake(b.db, b.bus).record([
      { id: fact.event.id, merchant: 'm_d', mode: 'test', type: 'order.created', created: fact.event.created, actor_id: 'x1', body: '{"different":"bytes"}' },
    ]);
    await waitForStatus(b, 'm_d', { succeeded: 1 });
    await new Promise((r) => setTimeout(r, 500));
    expect(rx.ids()).toEqual(['evt_0123456789abcdef']);
    expect(JSON.parse(rx.received[0]!.rawBody.toString())).toEqual(fact.event);
  });

  it('retries non-2xx answers with a fresh timestamp, logs every attempt, and keeps excerpts within 1 KiB', async () => {
    const ep = await endpointFor(b, 'm_t', rx.url);
    const long = 'é'.repeat(3000); // 6000 bytes of two-byte characters
    rx.reply = (r) => (rx.received.filter((x) => x.eventId === r.eventId).length <= 2 ? { status: 503, body: long } : 200);
    stack = await startStack(b);
    const ids = await stack.order('m_t', 't1', 2);
    await waitForStatus(b, 'm_t', { succeeded: 3 }, 20_000);
    expectAllVerified(rx.received, [ep.secret]);
    for (const id of ids) {
      const copies = rx.received.filter((r) => r.eventId === id);
      expect(copies).toHaveLength(3);
      // Same bytes every time; only the timestamp and signature may change.
      expect(new Set(copies.map((c) => c.rawBody.toString())).size).toBe(1);
    }
    const { rows } = await b.db.query<{ delivery: string; attempt: number; status: number; response: string | null; signed_at: string }>(
      `SELECT a.delivery, a.attempt, a.status, a.response, a.signed_at FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery WHERE d.merchant = 'm_t' ORDER BY a.delivery, a.attempt`,
    );
    expect(rows).toHaveLength(9);
    const byDelivery = new Map<string, typeof rows>();
    for (const r of rows) byDelivery.set(r.delivery, [...(byDelivery.get(r.delivery) ?? []), r]);
    for (const list of byDelivery.values()) {
      expect(list.map((r) => [r.attempt, r.status])).toEqual([
        [1, 503],
        [2, 503],
        [3, 200],
      ]);
      const signed = list.map((r) => Number(r.signed_at));
      expect(signed[1]! > signed[0]! && signed[2]! > signed[1]!).toBe(true);
      const excerpt = list[0]!.response!;
      expect(Buffer.byteLength(excerpt)).toBeLessThanOrEqual(1024);
      expect(excerpt).toBe('é'.repeat(512));
    }
  });

  it('after the last scheduled retry the delivery is failed; redeliver sends it again with the same event id', async () => {
    rx.reply = () => 500;
    const ep = await endpointFor(b, 'm_f', rx.url);
    // Three days of schedule in about 0.3 s.
    stack = await startStack(b, { schedule: { scale: 0.000001, jitter: 0.2 }, pollMs: 20 });
    const [id] = await stack.order('m_f', 'f1');
    await waitForStatus(b, 'm_f', { failed: 1 }, 20_000);
    expect(rx.received).toHaveLength(10);
    const { rows } = await b.db.query<{ id: string }>(`SELECT id FROM webhook_deliveries WHERE merchant = 'm_f'`);
    const deliveryId = rows[0]!.id;
    const before = await getDelivery(b.db, 'm_f', deliveryId);
    expect(before).toMatchObject({ status: 'failed', attempts: 10, last_status: 500, event_id: id });
    expect(before.attempt_log.map((a) => a.attempt)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);

    rx.reply = () => 204;
    await redeliver(b.db, 'm_f', deliveryId);
    stack.webhooks.worker.nudge();
    await waitForStatus(b, 'm_f', { succeeded: 1 });
    expect(rx.received).toHaveLength(11);
    expect(rx.received[10]!.eventId).toBe(id);
    expectAllVerified(rx.received, [ep.secret]);
    const after = await getDelivery(b.db, 'm_f', deliveryId);
    expect(after.attempt_log.at(-1)).toMatchObject({ attempt: 11, manual: true, status: 204 });
    // Another merchant's delivery id is not found (spec: 404, never 403).
    await expect(getDelivery(b.db, 'm_other', deliveryId)).rejects.toBeInstanceOf(WebhookError);
  });

  it('410 disables the endpoint: nothing more is sent until the URL is set again', async () => {
    rx.reply = () => 410;
    await endpointFor(b, 'm_g', rx.url);
    stack = await startStack(b);
    await stack.order('m_g', 'g1');
    await waitForStatus(b, 'm_g', { disabled: 1 });
    const ep = await b.db.query<{ status: string; disabled_reason: string }>(`SELECT status, disabled_reason FROM webhook_endpoints WHERE merchant = 'm_g'`);
    expect(ep.rows[0]).toMatchObject({ status: 'disabled' });
    expect(ep.rows[0]!.disabled_reason).toMatch(/^410 Gone/);
    await stack.order('m_g', 'g2', 3);
    await waitFor(async () => (await deliveryStatuses(b, 'm_g')).disabled === 5, 10_000, 'parked deliveries');
    await new Promise((r) => setTimeout(r, 400));
    expect(rx.received).toHaveLength(1);
    const { rows } = await b.db.query<{ id: string }>(`SELECT id FROM webhook_deliveries WHERE merchant = 'm_g' LIMIT 1`);
    await expect(redeliver(b.db, 'm_g', rows[0]!.id)).rejects.toMatchObject({ code: 'endpoint_disabled' });

    rx.reply = () => 200;
    const again = await setEndpoint(b.db, { merchant: 'm_g', mode: 'test', url: rx.url }, { allowPrivate: true });
    expect(again).toMatchObject({ status: 'active', secret: null, created: false });
    await stack.order('m_g', 'g3');
    await waitForStatus(b, 'm_g', { succeeded: 1, disabled: 5 });
    expect(rx.received).toHaveLength(2);
  });

  it('a receiver that is down for a while gets every event once it is up, with the same ids', async () => {
    const ep = await endpointFor(b, 'm_u', rx.url);
    await rx.down();
    stack = await startStack(b, { schedule: { scale: 0.0002, jitter: 0.2 }, pollMs: 20 }); // 1 ms, 60 ms, 360 ms, 1.4 s, …
    const ids = await stack.order('m_u', 'u1', 9);
    await waitFor(
      async () => (await b.db.query<{ n: number }>(`SELECT count(DISTINCT a.delivery)::int AS n FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery WHERE d.merchant = 'm_u' AND a.attempt >= 2`)).rows[0]!.n === 10,
      15_000,
      'every delivery failed twice',
    );
    const errs = await b.db.query<{ error: string; status: number | null }>(`SELECT a.error, a.status FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery WHERE d.merchant = 'm_u' LIMIT 1`);
    expect(errs.rows[0]!.status).toBeNull();
    expect(errs.rows[0]!.error).toMatch(/ECONNREFUSED/);
    await rx.up();
    await waitForStatus(b, 'm_u', { succeeded: 10 }, 20_000);
    expect(rx.received).toHaveLength(10);
    expect(new Set(rx.ids())).toEqual(new Set(ids));
    expectAllVerified(rx.received, [ep.secret]);
  });

  it('a timeout is a failed attempt and is retried', async () => {
    rx.reply = (_r, nth) => (nth === 1 ? 'hang' : 200);
    await endpointFor(b, 'm_o', rx.url);
    // Long enough for the second attempt's answer on a loaded machine: a short one times it out too.
    stack = await startStack(b, { timeoutMs: 2_000 });
    await stack.order('m_o', 'o1');
    await waitForStatus(b, 'm_o', { succeeded: 1 });
    const { rows } = await b.db.query<{ attempt: number; status: number | null; error: string | null; latency_ms: number }>(
      `SELECT a.attempt, a.status, a.error, a.latency_ms FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery WHERE d.merchant = 'm_o' ORDER BY a.id`,
    );
    expect(rows[0]).toMatchObject({ attempt: 1, status: null, error: 'timeout after 2000 ms' });
    expect(rows[0]!.latency_ms).toBeGreaterThanOrEqual(1_990);
    expect(rows[1]).toMatchObject({ attempt: 2, status: 200, error: null });
  });

  it("a slow receiver does not hold up another merchant's deliveries", async () => {
    const fast = await Receiver.start();
    try {
      rx.reply = () => 'hang';
      await endpointFor(b, 'm_slow', rx.url);
      await endpointFor(b, 'm_fast', fast.url);
      stack = await startStack(b, { perEndpoint: 4, concurrency: 16, timeoutMs: 30_000 });
      const slowIds = await stack.order('m_slow', 'slow', 29);
      await waitFor(async () => rx.received.length >= 4, 10_000, 'slow receiver saturated');
      const started = Date.now();
      const fastIds = await stack.order('m_fast', 'fast', 19);
      await waitForStatus(b, 'm_fast', { succeeded: 20 }, 10_000);
      const tookMs = Date.now() - started;
      expect(new Set(fast.ids())).toEqual(new Set(fastIds));
      // Only its own share of the worker is stuck on the slow endpoint.
      expect(rx.received.length).toBe(4);
      expect(tookMs).toBeLessThan(10_000);
      rx.reply = () => 200;
      rx.release(200);
      await waitForStatus(b, 'm_slow', { succeeded: 30 }, 20_000);
      expect(new Set(rx.ids())).toEqual(new Set(slowIds));
    } finally {
      await fast.close();
    }
  });

  const ORDERS = 12;
  const DELIVERIES = ORDERS * 5;
  it('several workers share the work and never send the same attempt twice', async () => {
    await endpointFor(b, 'm_p', rx.url);
    stack = await startStack(b, { concurrency: 8 });
    const { WebhookRuntime } = await import('../../runtime/webhooks/service.ts');
    // Polling as often as the first worker: on the embedded database each poll waits its turn with the orders applied meanwhile.
    const second = new WebhookRuntime(b.db, b.bus, { allowPrivate: true, worker: { concurrency: 8, pollMs: 50 }, intake: { durable: 'webhook-intake' } });
    const third = new WebhookRuntime(b.db, b.bus, { allowPrivate: true, worker: { concurrency: 8, pollMs: 50 }, intake: { durable: 'webhook-intake' } });
    await second.start();
    await third.start();
    try {
      const ids: string[] = [];
      // Twelve orders, sixty deliveries: enough for three workers to contend for every claim, few
      // enough to finish well within the wait on a loaded machine (a hundred once took over 30 s).
      for (let i = 0; i < ORDERS; i++) ids.push(...(await stack.order('m_p', `p${i}`, 4)));
      expect(ids).toHaveLength(DELIVERIES);
      await waitForStatus(b, 'm_p', { succeeded: DELIVERIES }, 90_000);
      await new Promise((r) => setTimeout(r, 300));
      expect(rx.received).toHaveLength(DELIVERIES);
      expect(new Set(rx.ids())).toEqual(new Set(ids));
      const attempts = await b.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery WHERE d.merchant = 'm_p'`);
      expect(attempts.rows[0]!.n).toBe(DELIVERIES);
      const workers = [stack.webhooks.worker, second.worker, third.worker].map((w) => w.stats.attempts);
      expect(workers.reduce((a, x) => a + x, 0)).toBe(DELIVERIES);
    } finally {
      await second.stop();
      await third.stop();
    }
  }, 150_000);
});
