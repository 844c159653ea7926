/**
 * Who may open the operator console (issue 24 "Security"; DESIGN §7 "Operator console":
 * operator token login form, cookie session + CSRF, the token never in a URL):
 * - without a session every page redirects to the login and every data or stream path is 401;
 * - an API key, or the operator token itself as a bearer, opens nothing (sessions only);
 * - a merchant's dashboard session is not an operator session, whatever cookie carries it;
 * - the login compares the token in constant time (equal-length digests), refuses a wrong one
 *   (401) and locks an address out after five failures (429);
 * - every write (login, logout, verify) needs the page's CSRF token and a same-origin Origin.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SessionStore } from '../../runtime/sessions/store.ts';
import { tokenMatches } from '../../gateway/ops/pages.ts';
import { OPS_COOKIE } from '../../gateway/ops/index.ts';
import { OpsClient, startOpsServices, type OpsHarness } from './harness.ts';

let h: OpsHarness;
let secretKey: string;
let merchantId: string;
let intentId: string;

beforeAll(async () => {
  h = await startOpsServices();
  console.log(`[ops] backends: ${h.backend}`);
  const m = await fetch(`${h.svc}/ops/api/merchants`, { method: 'POST', headers: { authorization: `Bearer ${h.operatorToken}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'Sec shop' }) });
  const made = (await m.json()) as { merchant_id: string; keys: { test: { secret: string } } };
  merchantId = made.merchant_id;
  secretKey = made.keys.test.secret;
  const pi = await fetch(`${h.svc}/api/v1/payment-intents`, { method: 'POST', headers: { authorization: `Bearer ${secretKey}`, 'content-type': 'application/json', 'idempotency-key': 'sec-1' }, body: JSON.stringify({ amount: '1' }) });
  intentId = ((await pi.json()) as { id: string }).id;
}, 120_000);

afterAll(async () => {
  await h?.close();
}, 60_000);

const PAGES = ['/ops', '/ops/actors', '/ops/actors/pay_x'];
const DATA = ['/ops/data/overview', '/ops/data/actors', '/ops/data/machines/payment_intent', '/ops/streams/overview'];

describe('operator console access', () => {
  it('without a session: pages redirect to the login, data and streams are 401', async () => {
    const c = new OpsClient(h.svc);
    for (const p of PAGES) {
      const r = await c.fetch(p);
      expect([p, r.status, r.headers.get('location')]).toEqual([p, 303, '/ops/login']);
    }
    for (const p of [...DATA, `/ops/data/actors/${intentId}`, `/ops/streams/actors/${intentId}`]) {
      const r = await c.fetch(p);
      expect([p, r.status]).toEqual([p, 401]);
      expect(((await r.json()) as { error: { code: string } }).error.code).toBe('unauthorized');
    }
    const login = await c.fetch('/ops/login');
    expect(login.status).toBe(200);
    expect(login.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(login.headers.get('x-frame-options')).toBe('DENY');
  });

  it('an API key or the operator token as a bearer opens nothing: the console takes sessions only', async () => {
    const c = new OpsClient(h.svc);
    for (const bearer of [secretKey, h.operatorToken]) {
      for (const p of [...PAGES, ...DATA]) {
        const r = await c.fetch(p, { headers: { authorization: `Bearer ${bearer}` } });
        expect([p, r.status]).toEqual([p, 401]);
      }
    }
  });

  it("a merchant's session cannot open /ops, under either cookie name", async () => {
    const store = new SessionStore(h.services.db);
    const { token } = await store.create({ kind: 'merchant', principal: merchantId, csrfSecret: 'x'.repeat(24) });
    for (const name of [OPS_COOKIE, 'anm_session']) {
      const r = await fetch(`${h.svc}/ops/data/overview`, { headers: { cookie: `${name}=${token}` } });
      expect([name, r.status]).toEqual([name, 401]);
      const page = await fetch(`${h.svc}/ops`, { headers: { cookie: `${name}=${token}` }, redirect: 'manual' });
      expect([name, page.status]).toEqual([name, 303]);
    }
  });

  it('the operator token logs in; the session opens pages, data and streams; logout ends it', async () => {
    const c = new OpsClient(h.svc);
    const r = await c.login(h.operatorToken);
    expect(r.status).toBe(200);
    const cookie = r.headers.getSetCookie().find((x) => x.startsWith(`${OPS_COOKIE}=`))!;
    expect(cookie).toMatch(/HttpOnly/i);
    expect(cookie).toMatch(/SameSite=Lax/i);
    expect(cookie).toMatch(/Path=\/ops/);
    for (const p of ['/ops', '/ops/actors', `/ops/actors/${intentId}`]) expect([p, (await c.fetch(p)).status]).toEqual([p, 200]);
    for (const p of ['/ops/data/overview', '/ops/data/actors', `/ops/data/actors/${intentId}`, '/ops/data/machines/payment_intent']) expect([p, (await c.fetch(p)).status]).toEqual([p, 200]);
    const out = await c.fetch('/ops/logout', { method: 'POST', body: {} });
    expect(out.status).toBe(200);
    expect((await c.fetch('/ops/data/overview')).status).toBe(401);
  });

  it('writes need the CSRF token and a same-origin Origin: 403 csrf_failed otherwise', async () => {
    const c = new OpsClient(h.svc);
    expect((await c.login(h.operatorToken)).status).toBe(200);
    const verify = `/ops/data/actors/${intentId}/verify`;
    const noToken = await c.fetch(verify, { method: 'POST', body: {}, csrf: false });
    expect(noToken.status).toBe(403);
    expect(((await noToken.json()) as { error: { code: string } }).error.code).toBe('csrf_failed');
    const otherOrigin = await c.fetch(verify, { method: 'POST', body: {}, headers: { origin: 'https://evil.example' } });
    expect(otherOrigin.status).toBe(403);
    const ok = await c.fetch(verify, { method: 'POST', body: {} });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toMatchObject({ actor_id: intentId, equal: true, error: null });
    // The login form is a write too: without the visitor's token it is refused before the token is looked at.
    const fresh = new OpsClient(h.svc);
    expect((await fresh.fetch('/ops/login', { method: 'POST', body: { token: h.operatorToken } })).status).toBe(403);
  });

  it('a wrong token is 401; five failures from one address lock it out (429 with Retry-After)', async () => {
    const c = new OpsClient(h.svc);
    for (let i = 0; i < 5; i++) expect((await c.login(`${h.operatorToken}x`)).status).toBe(401);
    const locked = await c.login(h.operatorToken);
    expect(locked.status).toBe(429);
    expect(Number(locked.headers.get('retry-after'))).toBeGreaterThan(0);
    await h.services.db.query(`DELETE FROM login_failures`);
  });

  it('the token compare is over equal-length digests, so any input length is compared in constant time', () => {
    expect(tokenMatches('opt_abc', 'opt_abc')).toBe(true);
    expect(tokenMatches('opt_ab', 'opt_abc')).toBe(false);
    expect(tokenMatches('', 'opt_abc')).toBe(false);
    expect(tokenMatches('x'.repeat(10_000), 'opt_abc')).toBe(false);
  });

  it('bad query input is a 400, never a 500', async () => {
    const c = new OpsClient(h.svc);
    await c.login(h.operatorToken);
    for (const p of ['/ops/data/actors?limit=0', '/ops/data/actors?limit=abc', '/ops/data/actors?bogus=1', `/ops/data/actors/${intentId}/journal?before=-1`, `/ops/data/actors?prefix=${'a'.repeat(500)}`]) {
      expect([p, (await c.fetch(p)).status]).toEqual([p, 400]);
    }
    expect((await c.fetch('/ops/data/actors/nope')).status).toBe(404);
    expect((await c.fetch('/ops/data/machines/nope')).status).toBe(404);
  });
});
