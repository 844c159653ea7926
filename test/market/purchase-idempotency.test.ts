/* eslint-disable @typescript-eslint/no-unsafe-argument, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-return --
   assertions read parsed JSON response bodies. */
/**
 * Conformance: the `idempotency-key` of a purchase (marketplace.md:94 "header
 * `idempotency-key`"; DESIGN §5 "Purchase": "replay as in the merchant API", i.e.
 * merchant-payment-api.md:164 rule 1), scoped per purchase intent (ADR 0026), durable in
 * PostgreSQL and kept 24 hours as the merchant API's (DESIGN §4).
 */
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { beforeAll, describe, expect, it } from 'vitest';
import { requestHash } from '../../gateway/http/idempotency.ts';
import { buildMarketApp } from '../../gateway/market/app.ts';
import { openMarket } from '../../runtime/market/index.ts';
import { request } from '../conformance/harness.ts';
import { seller, signedListing, signLeg, type Seller } from '../fixtures/market.ts';
import { FEE_ADDRESSES, useMarket } from './harness.ts';

const h = useMarket();
let s: Seller;
const buyer = privateKeyToAccount(generatePrivateKey());

beforeAll(async () => {
  s = seller();
  expect((await h.req('POST', '/api/v1/resources', { body: await signedListing(s, { name: 'Idempotent geocoder', tags: ['geocode'], price: '0.03' }) })).status).toBe(201);
  await h.market.ledger.fund(buyer.address, 10_000_000n);
});

const quote = async (): Promise<string> => (await h.req('POST', '/api/v1/route/quote', { body: { capability: 'geocoder', asset: 'USDC' } })).json.intent_id;
const legs = async () => ({
  seller: await signLeg(buyer, { to: s.evm.address, value: 30_000n }),
  fee: await signLeg(buyer, { to: FEE_ADDRESSES.USDC, value: 150n }),
});
const purchase = (intent: string, l: unknown, key: string, url = h.url) =>
  request(url, 'POST', '/api/v1/purchase', { headers: { 'idempotency-key': key }, body: { intent_id: intent, payment: { legs: l } } });
/** Once `inside` says the attempt is inside the purchase (its key claimed); refused if it answered without getting there. */
const running = (attempt: Promise<{ status: number }>, inside: Promise<void>): Promise<void> =>
  Promise.race([inside, attempt.then((r) => Promise.reject(new Error(`the first attempt answered ${r.status} without running the purchase`)))]);
const verifyEvents = async (intent: string): Promise<number> =>
  (await h.backend.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM actor_events WHERE actor_id = $1 AND event->>'type' = 'purchase.verify'`, [intent])).rows[0]!.n;

describe('purchase idempotency-key (marketplace.md:94; merchant-payment-api.md:164 rule 1 as DESIGN §5 asks)', () => {
  it(':164 same key + same body → the first response byte for byte with idempotent-replay: true, even after the purchase moved on', async () => {
    const intent = await quote();
    const l = await legs();
    const first = await purchase(intent, l, 'k-replay');
    expect(first.status).toBe(200);
    expect(first.headers['idempotent-replay']).toBeUndefined();
    // The seller settles its leg, the fee follows: the purchase is SETTLED now.
    const header = JSON.parse(Buffer.from(first.json.seller_payment.value, 'base64').toString());
    expect((await h.req('POST', '/facilitator/settle', { body: { x402Version: 2, paymentPayload: header, paymentRequirements: header.accepted } })).json.success).toBe(true);
    expect((await h.req('GET', `/api/v1/purchases/${intent}`)).json.status).toBe('SETTLED');
    // Keys reordered and other whitespace are the same body.
    const again = await request(h.url, 'POST', '/api/v1/purchase', { headers: { 'idempotency-key': 'k-replay' }, body: `{ "payment": {"legs": ${JSON.stringify(l)}},\n"intent_id": "${intent}" }` });
    expect(again.status).toBe(200);
    expect(again.headers['idempotent-replay']).toBe('true');
    expect(again.raw.equals(first.raw)).toBe(true);
    expect(again.json.status).toBe('VERIFIED');
    expect(await verifyEvents(intent)).toBe(1);
  });

  it(':164 same key + a different body (legs signed again) → 409 idempotency_key_reused; nothing runs', async () => {
    const intent = await quote();
    const first = await purchase(intent, await legs(), 'k-reuse');
    expect(first.status).toBe(200);
    const other = await purchase(intent, await legs(), 'k-reuse');
    expect(other.status).toBe(409);
    expect(other.json.error).toMatchObject({ type: 'invalid_request', code: 'idempotency_key_reused' });
    expect(await verifyEvents(intent)).toBe(1);
  });

  it(':164 concurrent requests with one key → one runs; the others are 429 rate_limited with Retry-After; afterwards it replays', async () => {
    const intent = await quote();
    const l = await legs();
    // Hold the first attempt inside the purchase until every other request has been answered.
    const original = h.market.purchases.purchase.bind(h.market.purchases);
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let runs = 0;
    let entered!: () => void;
    const inside = new Promise<void>((r) => (entered = r));
    h.market.purchases.purchase = async (...args) => {
      runs++;
      entered();
      await held;
      return original(...args);
    };
    try {
      const first = purchase(intent, l, 'k-race');
      // The others are sent once the first has claimed the key and runs, however long that takes.
      await running(first, inside);
      const racing = await Promise.all(Array.from({ length: 6 }, () => purchase(intent, l, 'k-race')));
      for (const r of racing) {
        expect(r.status).toBe(429);
        expect(r.json.error.code).toBe('rate_limited');
        expect(r.headers['retry-after']).toBe('1');
      }
      release();
      expect((await first).status).toBe(200);
    } finally {
      release();
      h.market.purchases.purchase = original;
    }
    expect(runs).toBe(1);
    const after = await purchase(intent, l, 'k-race');
    expect(after.headers['idempotent-replay']).toBe('true');
    expect(await verifyEvents(intent)).toBe(1);
  });

  it(':164 across marketplace processes: while one runs the purchase, the same key at another process is 429; afterwards it replays there', async () => {
    const intent = await quote();
    const l = await legs();
    const other = await buildMarketApp({ ...openMarket(h.backend.db, h.host, { feeAddresses: FEE_ADDRESSES }), perIpPerMinute: 1e6 });
    const otherUrl = await other.listen({ port: 0, host: '127.0.0.1' });
    const original = h.market.purchases.purchase.bind(h.market.purchases);
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let entered!: () => void;
    const inside = new Promise<void>((r) => (entered = r));
    h.market.purchases.purchase = async (...args) => {
      entered();
      await held;
      return original(...args);
    };
    try {
      const first = purchase(intent, l, 'k-two-processes');
      await running(first, inside);
      const elsewhere = await Promise.all(Array.from({ length: 4 }, () => purchase(intent, l, 'k-two-processes', otherUrl)));
      expect(elsewhere.map((r) => [r.status, r.json.error?.code])).toEqual(Array.from({ length: 4 }, () => [429, 'rate_limited']));
      release();
      const done = await first;
      expect(done.status).toBe(200);
      const replay = await purchase(intent, l, 'k-two-processes', otherUrl);
      expect(replay.headers['idempotent-replay']).toBe('true');
      expect(replay.raw.equals(done.raw)).toBe(true);
    } finally {
      release();
      h.market.purchases.purchase = original;
      await other.close();
    }
    expect(await verifyEvents(intent)).toBe(1);
  });

  it('ADR 0026: keys are scoped per intent, so one key used for two intents runs both', async () => {
    const [a, b] = [await quote(), await quote()];
    const ra = await purchase(a, await legs(), 'k-shared');
    const rb = await purchase(b, await legs(), 'k-shared');
    expect([ra.status, rb.status]).toEqual([200, 200]);
    expect(rb.headers['idempotent-replay']).toBeUndefined();
    expect([ra.json.intent_id, rb.json.intent_id]).toEqual([a, b]);
  });

  it('docs/errors.md invalid_body "a field outside its schema": an unknown field at any depth → 400, nothing verified, the key kept for the corrected body', async () => {
    const intent = await quote();
    const l = await legs();
    const bodies = [
      { intent_id: intent, payment: { legs: l }, foo: 1 },
      // The split scheme's payload names its intent: another one is refused (the same one is taken, below).
      { intent_id: intent, payment: { legs: l, intent_id: 'pi_0000000000000000000000ff' } },
      { intent_id: intent, payment: { legs: { ...l, tip: l.fee } } },
    ];
    for (const body of bodies) {
      const r = await request(h.url, 'POST', '/api/v1/purchase', { headers: { 'idempotency-key': 'k-strict' }, body });
      expect({ status: r.status, code: r.json.error?.code }).toEqual({ status: 400, code: 'invalid_body' });
    }
    expect(await verifyEvents(intent)).toBe(0);
    // `payment` as the split scheme's whole payload (`{intent_id, legs}`), as a buyer may pass it on.
    const ok = await request(h.url, 'POST', '/api/v1/purchase', { headers: { 'idempotency-key': 'k-strict' }, body: { intent_id: intent, payment: { intent_id: intent, legs: l } } });
    expect([ok.status, ok.json.status, ok.headers['idempotent-replay']]).toEqual([200, 'VERIFIED', undefined]);
  });

  it('a refused attempt keeps nothing: the corrected retry under the same key runs', async () => {
    const intent = await quote();
    const good = await legs();
    const short = { ...good, fee: await signLeg(buyer, { to: FEE_ADDRESSES.USDC, value: 149n }) };
    const refused = await purchase(intent, short, 'k-fix');
    expect(refused.status).toBe(402);
    const ok = await purchase(intent, good, 'k-fix');
    expect(ok.status).toBe(200);
    expect(ok.headers['idempotent-replay']).toBeUndefined();
  });

  it('durable in PostgreSQL: another marketplace process over the same database replays it', async () => {
    const intent = await quote();
    const l = await legs();
    const first = await purchase(intent, l, 'k-durable');
    const { rows } = await h.backend.db.query<{ state: string; status: number }>(`SELECT state, status FROM idempotency_keys WHERE merchant = $1 AND mode = 'market' AND key = 'k-durable'`, [intent]);
    expect(rows).toEqual([{ state: 'done', status: 200 }]);
    const other = await buildMarketApp({ ...openMarket(h.backend.db, h.host, { feeAddresses: FEE_ADDRESSES }), perIpPerMinute: 1e6 });
    const url = await other.listen({ port: 0, host: '127.0.0.1' });
    try {
      const replay = await purchase(intent, l, 'k-durable', url);
      expect(replay.headers['idempotent-replay']).toBe('true');
      expect(replay.raw.equals(first.raw)).toBe(true);
    } finally {
      await other.close();
    }
  });

  it('DESIGN §4 records live 24 hours: past that the key runs afresh (the purchase itself answers the same legs the same)', async () => {
    const intent = await quote();
    const l = await legs();
    expect((await purchase(intent, l, 'k-old')).status).toBe(200);
    await h.backend.db.query(`UPDATE idempotency_keys SET created_at = now() - interval '25 hours' WHERE merchant = $1 AND mode = 'market'`, [intent]);
    const fresh = await purchase(intent, l, 'k-old');
    expect(fresh.status).toBe(200);
    expect(fresh.headers['idempotent-replay']).toBeUndefined();
    expect(fresh.json.status).toBe('VERIFIED');
    expect(await h.market.purchaseKeys.sweep()).toBeGreaterThanOrEqual(0);
  });

  it('an attempt abandoned in flight for a minute is taken over by a retry (ADR 0005)', async () => {
    const intent = await quote();
    const l = await legs();
    const body = { intent_id: intent, payment: { legs: l } };
    await h.backend.db.query(
      `INSERT INTO idempotency_keys (merchant, mode, key, request_hash, state, updated_at) VALUES ($1, 'market', 'k-dead', $2, 'in_flight', now() - interval '2 minutes')`,
      [intent, requestHash('POST /api/v1/purchase', body)],
    );
    const r = await purchase(intent, l, 'k-dead');
    expect(r.status).toBe(200);
    expect(r.json.status).toBe('VERIFIED');
  });

  it('header rules: missing → 400 idempotency_key_required; over 255 characters → 400 bad_request', async () => {
    const intent = await quote();
    const none = await h.req('POST', '/api/v1/purchase', { body: { intent_id: intent, payment: { legs: {} } } });
    expect(none.json.error.code).toBe('idempotency_key_required');
    const long = await purchase(intent, await legs(), 'k'.repeat(256));
    expect([long.status, long.json.error.code]).toEqual([400, 'bad_request']);
  });
});
