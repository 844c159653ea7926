/* eslint-disable @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-return --
   assertions read parsed JSON; its shape is checked against the OpenAPI document after the file. */
/** Spec Endpoints "Create" (Idempotency-Key) and CreatePaymentIntentRequest.merchant_order_id. */
import { beforeAll, describe, expect, it } from 'vitest';
import type { CreatedMerchant } from '../../runtime/merchant/merchants.ts';
import { idem, intentBody, useHarness } from './harness.ts';

const PATH = '/api/v1/payment-intents';

describe('conformance: idempotency', () => {
  const h = useHarness();
  let m: CreatedMerchant;
  let key: string;
  beforeAll(async () => {
    m = await h().merchant();
    key = m.keys.test.secret;
  });
  const actors = async (merchant: string) =>
    (await h().backend.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM actors WHERE merchant = $1`, [merchant])).rows[0]!.n;

  it('Create 1: "the first attempt with a given Idempotency-Key runs"', async () => {
    const before = await actors(m.merchant_id);
    const r = await h().req('POST', PATH, { key, idem: idem(), body: intentBody() });
    expect(r.status).toBe(201);
    expect(r.headers['idempotent-replay']).toBeUndefined();
    expect(await actors(m.merchant_id)).toBe(before + 1);
  });

  it('Create 1: "the same key with the same body replays the first response byte for byte with idempotent-replay: true"', async () => {
    const k = idem();
    const body = { amount: '1.5', description: 'x', metadata: { b: 1, a: [1, 2] } };
    const first = await h().req('POST', PATH, { key, idem: k, body });
    const before = await actors(m.merchant_id);
    await h().req('POST', `${PATH}/${first.json.id}/cancel`, { key });
    // Same body with other whitespace and key order is the same request.
    const again = await h().req('POST', PATH, { key, idem: k, body: '{ "metadata": {"a": [1, 2], "b": 1},\n "description": "x", "amount": "1.5" }' });
    expect(again.status).toBe(200);
    expect(again.headers['idempotent-replay']).toBe('true');
    expect(again.raw.equals(first.raw)).toBe(true);
    expect(again.json.status).toBe('AWAITING_PAYMENT');
    expect(await actors(m.merchant_id)).toBe(before);
  });

  it('Create 1: "the same key with a different body returns 409 idempotency_key_reused"', async () => {
    const k = idem();
    await h().req('POST', PATH, { key, idem: k, body: intentBody({ amount: '1' }) });
    const r = await h().req('POST', PATH, { key, idem: k, body: intentBody({ amount: '2' }) });
    expect(r.status).toBe(409);
    expect(r.json.error.code).toBe('idempotency_key_reused');
  });

  it('Create 1: "while the first attempt is still running, a retry with the same key returns 429 rate_limited with Retry-After"', async () => {
    const k = idem();
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let entered!: () => void;
    const inside = new Promise<void>((r) => (entered = r));
    h().hooks.beforeApply = () => (entered(), held);
    const first = h().req('POST', PATH, { key, idem: k, body: intentBody() });
    // The retry is sent once the first attempt has claimed the key and is applying, however long that takes.
    await Promise.race([inside, first.then((r) => Promise.reject(new Error(`the first attempt answered ${r.status} without applying`)))]);
    const retry = await h().req('POST', PATH, { key, idem: k, body: intentBody() });
    h().hooks.beforeApply = undefined;
    release();
    expect(retry.status).toBe(429);
    expect(retry.json.error).toMatchObject({ code: 'rate_limited', retryAfter: 1 });
    expect(retry.headers['retry-after']).toBe('1');
    expect((await first).status).toBe(201);
  });

  it('Create 1: "Keys are scoped per merchant" (and per mode)', async () => {
    const other = await h().merchant();
    const k = idem();
    const a = await h().req('POST', PATH, { key, idem: k, body: intentBody() });
    const b = await h().req('POST', PATH, { key: other.keys.test.secret, idem: k, body: intentBody() });
    const c = await h().req('POST', PATH, { key: m.keys.live.secret, idem: k, body: intentBody() });
    expect([a.status, b.status, c.status]).toEqual([201, 201, 201]);
    expect(new Set([a.json.id, b.json.id, c.json.id]).size).toBe(3);
  });

  it('Errors: "400 idempotency_key_required: Idempotency-Key missing on intent creation"', async () => {
    for (const headers of [{}, { 'idempotency-key': '' }] as Array<Record<string, string>>) {
      const r = await h().req('POST', PATH, { key, headers, body: intentBody() });
      expect(r.status).toBe(400);
      expect(r.json.error.code).toBe('idempotency_key_required');
    }
  });

  it('Limits: "Idempotency-Key: string, max 255 chars"', async () => {
    expect((await h().req('POST', PATH, { key, idem: 'k'.repeat(255), body: intentBody() })).status).toBe(201);
    const r = await h().req('POST', PATH, { key, idem: 'k'.repeat(256), body: intentBody() });
    expect(r.status).toBe(400);
    expect(r.json.error.type).toBe('invalid_request');
  });

  it('DESIGN §4: "Idempotency records live 24 hours" — after that the key runs afresh', async () => {
    const k = idem();
    const first = await h().req('POST', PATH, { key, idem: k, body: intentBody() });
    await h().backend.db.query(`UPDATE idempotency_keys SET created_at = now() - interval '24 hours 1 minute' WHERE key = $1`, [k]);
    const again = await h().req('POST', PATH, { key, idem: k, body: intentBody() });
    expect(again.status).toBe(201);
    expect(again.json.id).not.toBe(first.json.id);
    await h().backend.db.query(`UPDATE idempotency_keys SET created_at = now() - interval '25 hours'`);
    expect(await h().services.idempotency.sweep()).toBeGreaterThan(0);
  });

  it('A first attempt that fails leaves the key free; an abandoned one is taken over on the same intent', async () => {
    const k = idem();
    h().hooks.beforeApply = () => Promise.reject(new Error('database went away'));
    const failed = await h().req('POST', PATH, { key, idem: k, body: intentBody() });
    h().hooks.beforeApply = undefined;
    expect(failed.status).toBe(500);
    expect((await h().req('POST', PATH, { key, idem: k, body: intentBody() })).status).toBe(201);
    // A process that died mid-request leaves the key in flight; after a minute a retry finishes it.
    const k2 = idem();
    const intentId = 'pay_' + 'q'.repeat(24);
    await h().backend.db.query(
      `INSERT INTO idempotency_keys (merchant, mode, key, request_hash, state, intent_id, updated_at)
       SELECT $1, 'test', $2, request_hash, 'in_flight', $3, now() - interval '2 minutes' FROM idempotency_keys WHERE key = $4`,
      [m.merchant_id, k2, intentId, k],
    );
    const taken = await h().req('POST', PATH, { key, idem: k2, body: intentBody() });
    expect(taken.status).toBe(201);
    expect(taken.json.id).toBe(intentId);
  });

  it('merchant_order_id: "unique per merchant. A second create for the same order returns the existing intent"', async () => {
    const first = await h().req('POST', PATH, { key, idem: idem(), body: intentBody({ merchant_order_id: 'order-1', amount: '5' }) });
    const second = await h().req('POST', PATH, { key, idem: idem(), body: intentBody({ merchant_order_id: 'order-1', amount: '6' }) });
    expect(first.status).toBe(201);
    expect(second.status).toBe(200);
    expect(second.json).toMatchObject({ id: first.json.id, anm_amount: '5000000000' });
    const racing = await Promise.all([1, 2, 3].map(() => h().req('POST', PATH, { key, idem: idem(), body: intentBody({ merchant_order_id: 'order-race' }) })));
    expect(new Set(racing.map((r) => r.json.id)).size).toBe(1);
    expect(racing.filter((r) => r.status === 201)).toHaveLength(1);
    const other = await h().merchant();
    const theirs = await h().req('POST', PATH, { key: other.keys.test.secret, idem: idem(), body: intentBody({ merchant_order_id: 'order-1' }) });
    expect(theirs.status).toBe(201);
    expect(theirs.json.id).not.toBe(first.json.id);
  });
});
