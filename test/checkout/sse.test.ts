/**
 * `/c/{id}/events` (spec Endpoints: "Server-Sent Events stream of intent state changes";
 * issue 6 item 2; format in docs/checkout.md): ordering, Last-Event-ID resume, closing on
 * final states, heartbeats, and 500 concurrent streams whose database cost does not grow
 * with their number.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { block, included, reorged, seen, timer } from '../fixtures/payment-intent.ts';
import { openCheckoutHarness, SseClient, type CheckoutHarness } from './harness.ts';

const FEE = '20000000';
const MERCHANT_LEG = '980000000';

let h: CheckoutHarness;
let merchant: string;

beforeAll(async () => {
  h = await openCheckoutHarness({ heartbeatMs: 150 });
  merchant = (await h.merchant()).merchant_id;
});

afterAll(async () => {
  await h?.close();
});

const events = (id: string) => `${h.url}/c/${id}/events`;
const now = () => Date.now();

/** Drives an intent to PAID the way the indexer would: seen, included at 100, blocks to 111. */
async function payFully(id: string, tx: string): Promise<void> {
  await h.apply(id, seen(now(), tx));
  await h.apply(id, included(now(), { tx, height: 100, head: 100 }));
  for (let head = 101; head <= 111; head++) await h.apply(id, block(now(), head));
}

describe('checkout event stream', () => {
  it('sends the current state first, then one event per status or confirmation change, ids = actor versions, in order; closes on PAID', async () => {
    const id = await h.intent(merchant);
    const c = await SseClient.open(events(id));
    expect(c.status).toBe(200);
    expect(c.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    expect(c.headers['cache-control']).toBe('no-store');
    expect(c.headers['x-content-type-options']).toBe('nosniff');
    await c.until((x) => x.statuses().length === 1, 5000, 'initial state');
    expect(c.statuses()[0]).toMatchObject({ id: '1', version: 1, status: 'AWAITING_PAYMENT', confirmations: 0, required_confirmations: 12, final: false, payable: true });

    await payFully(id, 'tx-order');
    await c.done;
    const s = c.statuses();
    expect(s.map((e) => `${e.status}:${e.confirmations}`)).toEqual([
      'AWAITING_PAYMENT:0',
      'PAYMENT_DETECTED:0',
      ...Array.from({ length: 11 }, (_, i) => `CONFIRMING:${i + 1}`),
      'PAID:12',
    ]);
    const ids = s.map((e) => Number(e.id));
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(new Set(ids).size).toBe(ids.length);
    for (const e of s) expect(Number(e.id)).toBe(e.version);
    const paid = s.at(-1)!;
    expect(paid.final).toBe(true);
    expect(paid.transaction_hash).toBe('tx-order');
    // Success is data only on PAID; nothing earlier carries it.
    for (const e of s.slice(0, -1)) expect(e.success_url).toBeNull();
    expect(c.events.at(-1)).toMatchObject({ event: 'end' });
    expect(c.ended).toBe(true);
  });

  it('success_url appears only in the PAID event', async () => {
    const id = await h.intent(merchant, { success_url: 'https://shop.example/thanks?o=1' });
    const c = await SseClient.open(events(id));
    await payFully(id, 'tx-success');
    await c.done;
    const s = c.statuses();
    expect(s.at(-1)).toMatchObject({ status: 'PAID', success_url: 'https://shop.example/thanks?o=1' });
    expect(s.filter((e) => e.success_url !== null)).toHaveLength(1);
  });

  it('resumes with Last-Event-ID: the current state only if newer, then live events; the header wins over ?last_event_id', async () => {
    const id = await h.intent(merchant);
    await h.apply(id, seen(now(), 'tx-resume'));
    await h.apply(id, included(now(), { tx: 'tx-resume', height: 100, head: 100 }));
    await h.apply(id, block(now(), 101));
    // Now version 4: CONFIRMING with 2 confirmations.

    const behind = await SseClient.open(events(id), { 'Last-Event-ID': '2' });
    await behind.until((x) => x.statuses().length === 1, 5000, 'catch-up state');
    expect(behind.statuses()[0]).toMatchObject({ id: '4', status: 'CONFIRMING', confirmations: 2 });

    const current = await SseClient.open(`${events(id)}?last_event_id=1`, { 'Last-Event-ID': '4' });
    const viaQuery = await SseClient.open(`${events(id)}?last_event_id=4`);
    await new Promise((r) => setTimeout(r, 300));
    expect(current.statuses()).toEqual([]);
    expect(viaQuery.statuses()).toEqual([]);

    await h.apply(id, block(now(), 102));
    for (const c of [behind, current, viaQuery]) await c.until((x) => x.statuses().some((e) => e.confirmations === 3), 5000, 'live event');
    expect(current.statuses()).toEqual([expect.objectContaining({ id: '5', confirmations: 3 })]);
    expect(behind.statuses().map((e) => e.id)).toEqual(['4', '5']);
    for (const c of [behind, current, viaQuery]) c.close();
  });

  it('a reconnect after the final event gets 204 (EventSource stops); one that missed it gets the final state and end', async () => {
    const id = await h.intent(merchant);
    await payFully(id, 'tx-final');
    const version = 14; // create + seen + included + 11 blocks
    const after = await SseClient.open(events(id), { 'Last-Event-ID': String(version) });
    expect(after.status).toBe(204);
    await after.done;
    const missed = await SseClient.open(events(id), { 'Last-Event-ID': String(version - 1) });
    await missed.done;
    expect(missed.statuses()).toEqual([expect.objectContaining({ id: String(version), status: 'PAID', final: true })]);
    expect(missed.events.at(-1)?.event).toBe('end');
  });

  it('heartbeats are comment lines; an unknown or malformed id is 404', async () => {
    const id = await h.intent(merchant);
    const c = await SseClient.open(events(id));
    await c.until((x) => x.comments >= 2, 3000, 'two heartbeats');
    c.close();
    const unknown = await SseClient.open(events('pay_aaaaaaaaaaaaaaaaaaaaaaaa'));
    expect(unknown.status).toBe(404);
    const bad = await SseClient.open(events('nope'));
    expect(bad.status).toBe(404);
  });

  it('underpaid stays open while shallow, closes once as deep as a settlement; a reorg shows its notice', async () => {
    const id = await h.intent(merchant);
    const c = await SseClient.open(events(id));
    await h.apply(id, seen(now(), 'tx-short', { merchant_leg: '900000000', fee_leg: FEE }));
    await c.until((x) => x.statuses().some((e) => e.status === 'UNDERPAID'), 5000, 'UNDERPAID');
    const under = c.statuses().find((e) => e.status === 'UNDERPAID')!;
    expect(under).toMatchObject({ shortfall: '80000000', shortfall_formatted: '0.08 ANM', final: false });
    await h.apply(id, included(now(), { tx: 'tx-short', legs: { merchant_leg: '900000000', fee_leg: FEE }, height: 200, head: 200 }));
    expect(c.ended).toBe(false);
    await h.apply(id, block(now(), 211));
    await c.done;
    expect(c.statuses().at(-1)).toMatchObject({ status: 'UNDERPAID', confirmations: 12, final: true });

    const r = await h.intent(merchant);
    const rc = await SseClient.open(events(r));
    await h.apply(r, seen(now(), 'tx-re', { merchant_leg: MERCHANT_LEG, fee_leg: FEE }));
    await h.apply(r, included(now(), { tx: 'tx-re', height: 300, head: 300 }));
    await h.apply(r, reorged(now(), 'tx-re', 300));
    await rc.until((x) => x.statuses().some((e) => e.notice === 'reorged'), 5000, 'reorged notice');
    expect(rc.statuses().map((e) => e.status)).toEqual(['AWAITING_PAYMENT', 'PAYMENT_DETECTED', 'CONFIRMING', 'AWAITING_PAYMENT']);
    expect(rc.statuses().at(-1)).toMatchObject({ notice: 'reorged', transaction_hash: null, payable: true, final: false });
    rc.close();
  });

  it('expired stays open during the late-payment watch, then ends without any event from the engine', async () => {
    const t = now();
    const id = await h.intent(merchant, { at: t - 60_000, expires_at: t - 1000, monitor_window_ms: 1500 });
    const c = await SseClient.open(events(id));
    await h.apply(id, timer(t));
    await c.until((x) => x.statuses().some((e) => e.status === 'EXPIRED'), 5000, 'EXPIRED');
    expect(c.statuses().at(-1)).toMatchObject({ status: 'EXPIRED', final: false });
    await c.done;
    const last = c.statuses().at(-1)!;
    expect(last).toMatchObject({ status: 'EXPIRED', final: true });
    expect(c.events.at(-1)?.event).toBe('end');
    expect(Date.now() - t).toBeGreaterThanOrEqual(500);
  });

  it('500 concurrent streams on one process: one read per intent at most to open them, zero per event or heartbeat', { timeout: 120_000 }, async () => {
    const N = 500;
    const INTENTS = 5;
    const ids: string[] = [];
    for (let i = 0; i < INTENTS; i++) ids.push(await h.intent(merchant));
    const control = await h.intent(merchant);

    // Cost of driving one intent through its life with no stream open.
    const steps = async (id: string, tx: string) => {
      await h.apply(id, seen(now(), tx));
      await h.apply(id, included(now(), { tx, height: 500, head: 500 }));
      await h.apply(id, block(now(), 501));
      await h.apply(id, block(now(), 502));
    };
    let q = h.db.queries;
    await steps(control, 'tx-control');
    const costAlone = h.db.queries - q;

    q = h.db.queries;
    const clients = await Promise.all(Array.from({ length: N }, (_, i) => SseClient.open(events(ids[i % INTENTS]!))));
    await Promise.all(clients.map((c) => c.until((x) => x.statuses().length === 1, 30_000, 'initial state')));
    const costToOpen = h.db.queries - q;
    expect(clients.every((c) => c.status === 200)).toBe(true);
    expect(costToOpen).toBeLessThanOrEqual(INTENTS);

    // Idle: heartbeats flow, the database hears nothing.
    q = h.db.queries;
    await Promise.all(clients.slice(0, 20).map((c) => c.until((x) => x.comments >= 2, 5000, 'heartbeats')));
    expect(h.db.queries - q).toBe(0);

    // The same life for an intent watched by 100 streams costs exactly what it cost alone.
    q = h.db.queries;
    await steps(ids[0]!, 'tx-watched');
    const costWatched = h.db.queries - q;
    expect(costWatched).toBe(costAlone);
    const watchers = clients.filter((_, i) => i % INTENTS === 0);
    await Promise.all(watchers.map((c) => c.until((x) => x.statuses().some((e) => e.confirmations === 3), 30_000, 'CONFIRMING 3')));
    for (const c of watchers) expect(c.statuses().map((e) => `${e.status}:${e.confirmations}`)).toEqual(['AWAITING_PAYMENT:0', 'PAYMENT_DETECTED:0', 'CONFIRMING:1', 'CONFIRMING:2', 'CONFIRMING:3']);
    // Streams of other intents got nothing.
    for (const c of clients.filter((_, i) => i % INTENTS !== 0)) expect(c.statuses()).toHaveLength(1);
    expect(h.db.queries - q).toBe(costAlone);

    console.log(`[sse] ${N} streams over ${INTENTS} intents: ${costToOpen} statements to open them all; an intent's life costs ${costAlone} statements unwatched and ${costWatched} watched by ${watchers.length} streams; 0 while idle`);
    for (const c of clients) c.close();
  });
});

describe('checkout event stream limits', () => {
  it('refuses streams over the per-address cap with 429 and Retry-After', async () => {
    const small = await openCheckoutHarness({ maxPerIp: 2 });
    try {
      const m = (await small.merchant()).merchant_id;
      const id = await small.intent(m);
      const a = await SseClient.open(`${small.url}/c/${id}/events`);
      const b = await SseClient.open(`${small.url}/c/${id}/events`);
      const c = await SseClient.open(`${small.url}/c/${id}/events`);
      expect([a.status, b.status, c.status]).toEqual([200, 200, 429]);
      expect(c.headers['retry-after']).toBe('5');
      a.close();
      await a.done;
      await new Promise((r) => setTimeout(r, 100));
      const d = await SseClient.open(`${small.url}/c/${id}/events`);
      expect(d.status).toBe(200);
      b.close();
      d.close();
    } finally {
      await small.close();
    }
  });
});
