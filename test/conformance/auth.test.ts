/* eslint-disable @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-member-access --
   assertions read parsed JSON; its shape is checked against the OpenAPI document after the file. */
/** Spec "Authentication" rules 1-7 and service rules 9 and 11 (scoping, 404 not 403). */
import { beforeAll, describe, expect, it } from 'vitest';
import type { CreatedMerchant } from '../../runtime/merchant/merchants.ts';
import { idem, intentBody, useHarness, type ReqOptions, type Res } from './harness.ts';

describe('conformance: authentication', () => {
  const h = useHarness();
  let m: CreatedMerchant;
  let intentId: string;
  let liveIntentId: string;
  const routes = (): Array<[string, string, ReqOptions]> => [
    ['POST', '/api/v1/payment-intents', { idem: idem(), body: intentBody() }],
    ['GET', '/api/v1/payment-intents', {}],
    ['GET', `/api/v1/payment-intents/${intentId}`, {}],
    ['POST', `/api/v1/payment-intents/${intentId}/cancel`, {}],
    ['GET', '/api/v1/balance', {}],
  ];
  const opaque = (r: Res) => ({ status: r.status, type: r.json?.error?.type, code: r.json?.error?.code, message: r.json?.error?.message });

  beforeAll(async () => {
    m = await h().merchant();
    intentId = (await h().req('POST', '/api/v1/payment-intents', { key: m.keys.test.secret, idem: idem(), body: intentBody() })).json.id as string;
    liveIntentId = (await h().req('POST', '/api/v1/payment-intents', { key: m.keys.live.secret, idem: idem(), body: intentBody() })).json.id as string;
  });

  it('Auth 1: "Every /api/v1 route requires a secret API key sent as Authorization: Bearer <API_KEY>"', async () => {
    for (const [method, path, opts] of routes()) {
      const r = await h().req(method, path, opts);
      expect(r.status, `${method} ${path}`).toBe(401);
      expect(r.json.error.code).toBe('unauthorized');
    }
    expect((await h().req('GET', '/api/v1/balance', { key: m.keys.test.secret })).status).toBe(200);
  });

  it('Auth 2: "A key has the form prefix + 32 characters of random output … ask_ keys are secret; apk_ keys are publishable"', () => {
    expect(m.keys.test.secret).toMatch(/^ask_test_[A-Za-z0-9]{32}$/);
    expect(m.keys.live.secret).toMatch(/^ask_live_[A-Za-z0-9]{32}$/);
    expect(m.keys.test.publishable).toMatch(/^apk_test_[A-Za-z0-9]{32}$/);
    expect(m.keys.live.publishable).toMatch(/^apk_live_[A-Za-z0-9]{32}$/);
  });

  it('Auth 3: "Publishable keys are refused on /api/v1"', async () => {
    for (const [method, path, opts] of routes()) expect((await h().req(method, path, { ...opts, key: m.keys.test.publishable })).status).toBe(401);
  });

  it('Auth 3: "Keys are never accepted from cookies. A key in a cookie is refused"', async () => {
    const cookieOnly = await h().req('GET', '/api/v1/balance', { headers: { cookie: `api_key=${m.keys.test.secret}` } });
    expect(cookieOnly.status).toBe(401);
    const both = await h().req('GET', '/api/v1/balance', { key: m.keys.test.secret, headers: { cookie: `session=x; key=${m.keys.test.secret}` } });
    expect(both.status).toBe(401);
    expect((await h().req('GET', '/api/v1/balance', { key: m.keys.test.secret, headers: { cookie: 'theme=dark' } })).status).toBe(200);
  });

  it('Auth 4: "Missing, malformed, unknown, revoked, wrong-kind or publishable keys all produce the same opaque 401 unauthorized"', async () => {
    const revoked = await h().services.merchants.createKey(m.merchant_id, 'test', 'secret');
    await h().services.merchants.revokeKey(revoked.id);
    const cases: Record<string, Record<string, string>> = {
      missing: {},
      'empty bearer': { authorization: 'Bearer ' },
      'other scheme': { authorization: `Basic ${Buffer.from(`${m.keys.test.secret}:`).toString('base64')}` },
      malformed: { authorization: 'Bearer ask_test_short' },
      'wrong prefix': { authorization: `Bearer xsk_test_${'a'.repeat(32)}` },
      unknown: { authorization: `Bearer ask_test_${'A'.repeat(32)}` },
      revoked: { authorization: `Bearer ${revoked.key}` },
      'wrong kind (publishable)': { authorization: `Bearer ${m.keys.live.publishable}` },
    };
    const seen = new Set<string>();
    for (const [name, headers] of Object.entries(cases)) {
      const r = await h().req('GET', '/api/v1/balance', { headers });
      expect(opaque(r), name).toEqual({ status: 401, type: 'invalid_request', code: 'unauthorized', message: expect.any(String) });
      seen.add(JSON.stringify(opaque(r)));
    }
    expect(seen.size).toBe(1);
  });

  it('Auth 5: "Secret keys are stored only as a keyed hash and are shown once"', async () => {
    const { rows } = await h().backend.db.query<{ row: string }>(`SELECT row_to_json(k)::text AS row FROM api_keys k WHERE merchant = $1`, [m.merchant_id]);
    expect(rows.length).toBeGreaterThanOrEqual(4);
    for (const k of Object.values(m.keys).flatMap((p) => [p.secret, p.publishable])) {
      for (const r of rows) expect(r.row).not.toContain(k.slice(9));
    }
    for (const r of rows) expect(JSON.parse(r.row).hash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('Auth 6: "ask_test_ and apk_test_ keys never move real ANM": a test key creates test-network intents only', async () => {
    const r = await h().req('GET', `/api/v1/payment-intents/${intentId}`, { key: m.keys.test.secret });
    expect(r.json.mode).toBe('test');
    expect(r.json.payment_address).toMatch(/^tanm1/);
  });

  it('Auth 7: "403 forbidden applies when the account is suspended"', async () => {
    const s = await h().merchant();
    await h().services.merchants.setStatus(s.merchant_id, 'suspended');
    for (const [method, path, opts] of routes()) {
      const r = await h().req(method, path, { ...opts, key: s.keys.test.secret });
      expect(r.status, `${method} ${path}`).toBe(403);
      expect(r.json.error.code).toBe('forbidden');
    }
    await h().services.merchants.setStatus(s.merchant_id, 'active');
    expect((await h().req('GET', '/api/v1/balance', { key: s.keys.test.secret })).status).toBe(200);
  });

  it('Rule 9: "Data is scoped to the merchant and to the mode (live or test) of the key"', async () => {
    expect((await h().req('GET', `/api/v1/payment-intents/${liveIntentId}`, { key: m.keys.test.secret })).status).toBe(404);
    expect((await h().req('GET', `/api/v1/payment-intents/${intentId}`, { key: m.keys.live.secret })).status).toBe(404);
    expect((await h().req('GET', `/api/v1/payment-intents/${liveIntentId}`, { key: m.keys.live.secret })).json.mode).toBe('live');
    const list = await h().req('GET', '/api/v1/payment-intents', { key: m.keys.live.secret });
    expect((list.json.data as Array<{ mode: string }>).every((x) => x.mode === 'live')).toBe(true);
  });

  it('Rule 11: "Another merchant\'s id yields 404, never 403, so ids cannot be enumerated"', async () => {
    const other = await h().merchant();
    for (const [method, path] of [
      ['GET', `/api/v1/payment-intents/${intentId}`],
      ['POST', `/api/v1/payment-intents/${intentId}/cancel`],
    ] as const) {
      const theirs = await h().req(method, path, { key: other.keys.test.secret });
      const unknown = await h().req(method, path.replace(intentId, 'pay_aaaaaaaaaaaaaaaaaaaaaaaa'), { key: other.keys.test.secret });
      expect(opaque(theirs)).toEqual({ status: 404, type: 'invalid_request', code: 'not_found', message: expect.any(String) });
      expect(opaque(theirs)).toEqual(opaque(unknown));
    }
    expect((await h().req('GET', `/api/v1/payment-intents/${intentId}`, { key: m.keys.test.secret })).json.status).toBe('AWAITING_PAYMENT');
  });
});
