/* eslint-disable @typescript-eslint/no-unsafe-argument, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-member-access --
   assertions read parsed JSON; its shape is checked against the OpenAPI document after the file. */
/**
 * Issue 3 §9: the operator API, the `anmpay merchant|keys` commands against the running app,
 * and the first-start bootstrap (DESIGN §6).
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { describe, expect, it, vi } from 'vitest';
import { main as keysCli } from '../../runtime/cli/keys.ts';
import { demoBanner } from '../../runtime/merchant/bootstrap.ts';
import { openMerchantServices } from '../../runtime/merchant/index.ts';
import { openEmbedded, openReal, realAvailable } from '../helpers/backends.ts';
import { SPEC_LIMITS, useHarness } from './harness.ts';

const run = promisify(execFile);

describe('conformance: operator API and CLI', () => {
  const h = useHarness();
  const op = (method: string, path: string, body?: unknown, token = h().services.operatorToken) =>
    h().req(method, path, { headers: { authorization: `Bearer ${token}` }, ...(body === undefined ? {} : { body }) });
  const cli = async (...args: string[]) => {
    try {
      const { stdout } = await run(process.execPath, ['bin/anmpay.js', ...args], {
        env: { ...process.env, ANMPAY_URL: h().url, ANMPAY_OPERATOR_TOKEN: h().services.operatorToken },
      });
      return { code: 0, stdout };
    } catch (e) {
      const err = e as { code: number; stdout: string };
      return { code: err.code, stdout: err.stdout };
    }
  };

  /** `anmpay keys …` in this process (same code as the binary, without a tsx start per call). */
  const keys = async (...args: string[]) => {
    const out: string[] = [];
    const spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => (out.push(String(chunk)), true));
    const env = { url: process.env.ANMPAY_URL, token: process.env.ANMPAY_OPERATOR_TOKEN };
    process.env.ANMPAY_URL = h().url;
    process.env.ANMPAY_OPERATOR_TOKEN = h().services.operatorToken;
    try {
      const code = await keysCli(args);
      return { code, stdout: out.join('') };
    } finally {
      spy.mockRestore();
      for (const [k, v] of [['ANMPAY_URL', env.url], ['ANMPAY_OPERATOR_TOKEN', env.token]] as const) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    }
  };

  it('the operator API answers only to the operator token (401 envelope otherwise)', async () => {
    for (const token of ['', 'opt_wrong', h().services.operatorToken.slice(0, -1)]) {
      const r = await op('POST', '/ops/api/merchants', { name: 'X' }, token);
      expect(r.status).toBe(401);
      expect(r.json.error.code).toBe('unauthorized');
    }
  });

  it('POST /ops/api/merchants creates a merchant whose keys work at once; bad bodies are 400 invalid_body, a taken email 409', async () => {
    const r = await op('POST', '/ops/api/merchants', { name: 'Ops Shop', email: 'ops@shop.example' });
    expect(r.status).toBe(201);
    expect((await h().req('GET', '/api/v1/balance', { key: r.json.keys.test.secret })).json.mode).toBe('test');
    expect((await h().req('GET', '/api/v1/balance', { key: r.json.keys.live.secret })).json).toMatchObject({ mode: 'live', payout_address: null });
    expect((await op('POST', '/ops/api/merchants', { name: 'Again', email: 'ops@shop.example' })).json.error.code).toBe('conflict');
    for (const body of [{}, { name: '' }, { name: 'x', extra: 1 }, { name: 'x', email: 'nope' }]) {
      expect((await op('POST', '/ops/api/merchants', body)).json.error.code).toBe('invalid_body');
    }
  });

  it('live intents need a live payout address: 400 payout_address_required, nothing created', async () => {
    const m = (await op('POST', '/ops/api/merchants', { name: 'No payout' })).json;
    const r = await h().req('POST', '/api/v1/payment-intents', { key: m.keys.live.secret, idem: 'p1', body: { amount: '1' } });
    expect(r.status).toBe(400);
    expect(r.json.error.code).toBe('payout_address_required');
    expect(await h().count(`idempotency_keys WHERE merchant = '${m.merchant_id}'`)).toBe(0);
  });

  it('`anmpay merchant create --name N --json` prints exactly {merchant_id, handle, dashboard:{email,password}, keys:{test:{secret,publishable},live:{…}}}', async () => {
    const { code, stdout } = await cli('merchant', 'create', '--name', 'CLI Shop', '--json');
    expect(code).toBe(0);
    const out = JSON.parse(stdout);
    expect(Object.keys(out)).toEqual(['merchant_id', 'handle', 'dashboard', 'keys']);
    expect(Object.keys(out.dashboard)).toEqual(['email', 'password']);
    expect(Object.keys(out.keys)).toEqual(['test', 'live']);
    for (const mode of ['test', 'live']) expect(Object.keys(out.keys[mode])).toEqual(['secret', 'publishable']);
    expect(out.keys.test.secret).toMatch(/^ask_test_/);
    expect((await h().req('GET', '/api/v1/balance', { key: out.keys.test.secret })).status).toBe(200);
  });

  it('`anmpay keys create|revoke`: a new key works; revoked (by id or by the key itself) it is 401', async () => {
    const m = (await op('POST', '/ops/api/merchants', { name: 'Keys' })).json;
    const created = await keys('create', '--merchant', m.merchant_id, '--mode', 'test', '--json');
    const k = JSON.parse(created.stdout);
    expect(k).toMatchObject({ merchant: m.merchant_id, mode: 'test', kind: 'secret' });
    expect((await h().req('GET', '/api/v1/balance', { key: k.key })).status).toBe(200);
    const byId = JSON.parse((await keys('revoke', k.id, '--json')).stdout);
    expect(byId.id).toBe(k.id);
    expect((await h().req('GET', '/api/v1/balance', { key: k.key })).status).toBe(401);
    expect(JSON.parse((await keys('revoke', m.keys.test.secret, '--json')).stdout).revoked_at).toBeTruthy();
    expect((await h().req('GET', '/api/v1/balance', { key: m.keys.test.secret })).status).toBe(401);
    const unknown = await keys('revoke', 'key_nope', '--json');
    expect(unknown.code).toBe(1);
    expect(JSON.parse(unknown.stdout).error.code).toBe('not_found');
    expect((await keys('create', '--json')).code).toBe(2);
  });

  it('suspend and activate through the operator API: a suspended account gets 403 forbidden', async () => {
    const m = (await op('POST', '/ops/api/merchants', { name: 'Suspend me' })).json;
    expect((await op('POST', `/ops/api/merchants/${m.merchant_id}/suspend`)).json).toEqual({ id: m.merchant_id, status: 'suspended' });
    expect((await h().req('GET', '/api/v1/balance', { key: m.keys.test.secret })).json.error.code).toBe('forbidden');
    await op('POST', `/ops/api/merchants/${m.merchant_id}/activate`);
    expect((await h().req('GET', '/api/v1/balance', { key: m.keys.test.secret })).status).toBe(200);
    expect((await op('POST', '/ops/api/merchants/mer_nobody/suspend')).status).toBe(404);
  });
});

describe('bootstrap', () => {
  it('DESIGN §6: "First start on an empty store creates a demo merchant and prints its dashboard login and test keys once"', async () => {
    const b = realAvailable ? await openReal() : await openEmbedded();
    try {
      const cfg = { ...SPEC_LIMITS, ANMPAY_DATA_DIR: '.data', ANMPAY_KEY_PEPPER: randomBytes(24).toString('hex'), ANMPAY_OPERATOR_TOKEN: `opt_${'x'.repeat(20)}`, ANM_RATES: undefined, RATE_SOURCE_URL: undefined };
      const first = await openMerchantServices(b.db, cfg);
      const second = await openMerchantServices(b.db, cfg);
      expect(first.demo).not.toBeNull();
      expect(second.demo).toBeNull();
      expect(second.treasury).toEqual(first.treasury);
      const banner = demoBanner(first.demo!, 'http://127.0.0.1:3000');
      expect(banner).toContain(first.demo!.dashboard.email);
      expect(banner).toContain(first.demo!.dashboard.password);
      expect(banner).toContain(first.demo!.keys.test.secret);
      // README "A first payment": the line to paste is printed as is.
      expect(banner).toContain(`\n    export ANMPAY_API_KEY=${first.demo!.keys.test.secret}\n`);
      for (const p of ['/dashboard', '/docs', '/ops']) expect(banner).toContain(`http://127.0.0.1:3000${p}\n`);
      expect(banner).not.toContain(first.demo!.keys.live.secret);
      // Issue 22 item 3: the widget works from any local port, in test mode only.
      expect(banner).toContain('widget origins      http://127.0.0.1:* http://localhost:* (test mode only)');
      const stored = await b.db.query<{ allowed_origins: string[] }>(`SELECT allowed_origins FROM merchants WHERE id = $1`, [first.demo!.merchant_id]);
      expect(stored.rows[0]!.allowed_origins).toEqual(['http://127.0.0.1:*', 'http://localhost:*']);
    } finally {
      await b.close();
    }
  });
});
