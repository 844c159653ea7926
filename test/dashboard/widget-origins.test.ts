/* eslint-disable @typescript-eslint/no-unsafe-member-access -- assertions read parsed JSON */
/**
 * Widget allowed origins with a loopback `*` port (issue 22 item 3; spec Endpoints `/c/{id}`
 * "With `embed=1` it runs in the widget iframe under a merchant-scoped frame-ancestors
 * policy"; DESIGN §6 first start). Through the operator API and the dashboard API a `*` is
 * accepted only as the port of a loopback origin; the demo merchant has both loopback
 * patterns; a test embed's CSP carries them and a live embed never does.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateWallet } from '../../runtime/chain/codec/keys.ts';
import type { CreatedMerchant } from '../../runtime/merchant/merchants.ts';
import { dashClient, startDashHarness, type DashClient, type DashHarness } from './harness.ts';

let h: DashHarness;
let m: CreatedMerchant;
let demo: DashClient;
let demoId: string;

interface OpReply {
  status: number;
  json: { error?: { code: string }; allowed_origins?: string[]; key?: string; dashboard?: { email: string; password: string } };
}

// [entry, stored as (null: refused 400 invalid_body)]
const TABLE: Array<[string, string | null]> = [
  ['http://127.0.0.1:*', 'http://127.0.0.1:*'],
  ['http://localhost:*', 'http://localhost:*'],
  ['HTTP://LocalHost:*/', 'http://localhost:*'],
  ['https://localhost:*', 'https://localhost:*'],
  ['https://shop.example/cart', 'https://shop.example'],
  ['http://127.0.0.1:8080', 'http://127.0.0.1:8080'],
  ['https://*.example', null],
  ['https://*', null],
  ['http://10.0.0.1:*', null],
  ['http://192.168.1.2:*', null],
  ['https://shop.example:*', null],
  ['http://[::1]:*', null],
  ['http://localhost:*/path', null],
  ['http://localhost:3*', null],
  ['*', null],
  ['javascript:alert(1)', null],
];

const op = (p: string, body: unknown): Promise<OpReply> =>
  fetch(`${h.svc}${p}`, { method: 'POST', headers: { authorization: `Bearer ${h.operatorToken}`, 'content-type': 'application/json' }, body: JSON.stringify(body) }).then(
    async (r) => ({ status: r.status, json: (await r.json()) as OpReply['json'] }),
  );

beforeAll(async () => {
  h = await startDashHarness();
  m = await h.merchant('Origins Shop');
  demo = dashClient(h.svc);
  expect((await demo.login(h.demoLogin.email, h.demoLogin.password)).status).toBe(200);
  demoId = ((await demo.req('GET', '/dashboard/api/me')).json.merchant as { id: string }).id;
}, 120_000);

afterAll(async () => {
  await h?.close();
});

describe('allowed origins: a * only as the port of a loopback host', () => {
  it.each(TABLE)('operator API POST /ops/api/merchants/{id}/allowed-origins %s → %s', async (entry, stored) => {
    const r = await op(`/ops/api/merchants/${m.merchant_id}/allowed-origins`, { origins: [entry] });
    if (stored === null) {
      expect(r.status).toBe(400);
      expect(r.json.error?.code).toBe('invalid_body');
    } else {
      expect(r.status).toBe(200);
      expect(r.json.allowed_origins).toEqual([stored]);
    }
  });

  it.each(TABLE)('dashboard API POST /dashboard/api/origins %s → %s', async (entry, stored) => {
    const c = dashClient(h.svc);
    expect((await c.login(m.dashboard.email, m.dashboard.password)).status).toBe(200);
    const r = await c.req('POST', '/dashboard/api/origins', { origins: [entry] });
    if (stored === null) {
      expect(r.status).toBe(400);
      expect(r.json.error?.code).toBe('invalid_body');
    } else {
      expect(r.status).toBe(200);
      expect(r.json.origins).toEqual([stored]);
    }
  });

  it('operator API POST /ops/api/merchants takes the same entries at creation, and refuses a * elsewhere', async () => {
    const ok = await op('/ops/api/merchants', { name: 'Local dev', allowed_origins: ['http://localhost:*', 'https://shop.example/x'] });
    expect(ok.status).toBe(201);
    const c = dashClient(h.svc);
    expect((await c.login(ok.json.dashboard!.email, ok.json.dashboard!.password)).status).toBe(200);
    expect((await c.req('GET', '/dashboard/api/origins')).json.origins).toEqual(['http://localhost:*', 'https://shop.example']);
    const bad = await op('/ops/api/merchants', { name: 'Bad', allowed_origins: ['https://*.example'] });
    expect(bad.status).toBe(400);
    expect(bad.json.error?.code).toBe('invalid_body');
  });
});

describe('first start: the demo merchant embeds from any local port in test mode only', () => {
  it('DESIGN §6: the demo merchant has http://127.0.0.1:* and http://localhost:* as allowed origins', async () => {
    expect((await demo.req('GET', '/dashboard/api/origins')).json.origins).toEqual(['http://127.0.0.1:*', 'http://localhost:*']);
  });

  it('spec /c/{id} embed=1: a test intent is framed under frame-ancestors with the loopback patterns; a live one is refused', async () => {
    const key = async (mode: 'test' | 'live', kind: 'secret' | 'publishable') => (await op(`/ops/api/merchants/${demoId}/keys`, { mode, kind })).json.key!;
    const test = await h.intent(await key('test', 'secret'), { amount: '1' });
    const page = await fetch(`${h.svc}/c/${test.id}?embed=1&pk=${await key('test', 'publishable')}`);
    expect(page.status).toBe(200);
    const csp = page.headers.get('content-security-policy') ?? '';
    expect(csp).toContain('frame-ancestors http://127.0.0.1:* http://localhost:*');
    expect(page.headers.get('x-frame-options')).toBeNull();

    // Live intents need the merchant's own payout address first.
    const payout = generateWallet('live');
    expect((await op(`/ops/api/merchants/${demoId}/payout`, { mode: 'live', address: payout.address })).status).toBe(200);
    const live = await h.intent(await key('live', 'secret'), { amount: '1' });
    const refused = await fetch(`${h.svc}/c/${live.id}?embed=1&pk=${await key('live', 'publishable')}`);
    expect(refused.status).toBe(404);
    expect(refused.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");

    // With an exact origin as well, a live embed is framed by that origin alone.
    await demo.req('POST', '/dashboard/api/origins', { origins: ['http://127.0.0.1:*', 'http://localhost:*', 'https://shop.example'] });
    const exact = await fetch(`${h.svc}/c/${live.id}?embed=1&pk=${await key('live', 'publishable')}`);
    expect(exact.status).toBe(200);
    expect(exact.headers.get('content-security-policy')).toMatch(/frame-ancestors https:\/\/shop\.example$/);
    expect(JSON.parse(/id="anm-checkout-data"[^>]*>([^<]*)</.exec(await exact.text())![1]!).embed).toEqual({ origins: ['https://shop.example'] });
    await demo.req('POST', '/dashboard/api/origins', { origins: ['http://127.0.0.1:*', 'http://localhost:*'] });
  });
});
