/**
 * The dashboard's JSON and its security over real HTTP on the whole service (real PostgreSQL
 * + NATS when reachable). Each case names the rule it checks: spec Authentication 3, 5, 8
 * and 10, DESIGN §7 "Login" and "Pages".
 */
import { readSse } from '../helpers/sse.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeSignedTx } from '../../machines/chain/index.ts';
import { readWalletFile, sign } from '../../runtime/chain/codec/keys.ts';
import { buildRefundTx, unsignedTransferSchema } from '../../runtime/chain/payment-tx.ts';
import { AnmRpcClient } from '../../runtime/chain/rpc-client.ts';
import type { CreatedMerchant } from '../../runtime/merchant/merchants.ts';
import { waitFor } from '../helpers/backends.ts';
import { dashClient, startDashHarness, type DashClient, type DashHarness } from './harness.ts';

let h: DashHarness;
let a: CreatedMerchant;
let b: CreatedMerchant;
let ca: DashClient;
let bIntent: string;

beforeAll(async () => {
  h = await startDashHarness({ ANMPAY_OPEN_SIGNUP: '1' });
  a = await h.merchant('Shop A');
  b = await h.merchant('Shop B');
  bIntent = (await h.intent(b.keys.test.secret, { amount: '1.5', description: 'B only' })).id;
  ca = dashClient(h.svc);
  expect((await ca.login(a.dashboard.email, a.dashboard.password)).status).toBe(200);
}, 120_000);

afterAll(async () => {
  await h?.close();
});

/** A dashboard refund's SSE stream: the status of each `refund` event and its id, in order. */
function refundStream(cookie: string, id: string) {
  const statuses: string[] = [];
  const ids: string[] = [];
  const s = readSse(`${h.svc}/dashboard/api/refunds/${id}/events`, cookie, (b) => {
    if (b.event !== 'refund') return;
    statuses.push((JSON.parse(b.data) as { refund: { status: string } }).refund.status);
    ids.push(b.id ?? '');
  });
  return { statuses, ids, close: s.close };
}

describe('dashboard sessions (DESIGN §7 Login, spec Authentication 8)', () => {
  it("DESIGN §6: the first start's banner prints a dashboard login that works", async () => {
    const c = dashClient(h.svc);
    expect((await c.login(h.demoLogin.email, h.demoLogin.password)).status).toBe(200);
    expect(((await c.req('GET', '/dashboard/api/me')).json.merchant as { email: string }).email).toBe('demo@anmpay.local');
    expect((await c.req('GET', '/dashboard')).status).toBe(200);
  });

  it('a page without a login redirects to /dashboard/login; the login page sets a visitor cookie', async () => {
    const c = dashClient(h.svc);
    const home = await c.req('GET', '/dashboard');
    expect(home.status).toBe(303);
    expect(home.headers.get('location')).toBe('/dashboard/login');
    const login = await c.req('GET', '/dashboard/login');
    expect(login.status).toBe(200);
    expect(login.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(login.headers.get('x-frame-options')).toBe('DENY');
    expect(login.headers.get('set-cookie')).toMatch(/anm_session=.*HttpOnly.*SameSite=Lax/i);
    expect((await c.req('GET', '/dashboard/api/me')).status).toBe(401);
  });

  it('session fixation: the cookie set before login is not the cookie after, and stops working', async () => {
    const c = dashClient(h.svc);
    await c.req('GET', '/dashboard/login');
    const before = c.cookie;
    const m = /"csrf":"([^"]+)"/.exec((await c.req('GET', '/dashboard/login')).text);
    c.csrf = m![1]!;
    expect((await c.req('POST', '/dashboard/api/login', { email: a.dashboard.email, password: a.dashboard.password })).status).toBe(200);
    expect(c.cookie).not.toBe(before);
    const stale = dashClient(h.svc);
    stale.cookie = before;
    expect((await stale.req('GET', '/dashboard/api/me')).status).toBe(401);
    expect((await c.req('GET', '/dashboard/api/me')).json.merchant).toMatchObject({ id: a.merchant_id, handle: a.handle });
  });

  it('a write without the CSRF token, with a wrong one, or with a foreign or missing Origin is 403', async () => {
    const cases: Array<[string, Parameters<DashClient['req']>[3], number]> = [
      ['token and own Origin', {}, 201],
      ['no token', { csrf: null }, 403],
      ['wrong token', { csrf: 'x'.repeat(30) }, 403],
      ['foreign Origin', { origin: 'https://evil.example' }, 403],
      ['no Origin', { origin: null }, 403],
    ];
    for (const [name, extra, status] of cases) {
      const r = await ca.req('POST', '/dashboard/api/keys', { kind: 'publishable' }, extra);
      expect(r.status, name).toBe(status);
      if (status === 403) expect(r.json.error?.code, name).toBe('csrf_failed');
    }
  });

  it('API keys are refused on dashboard routes; the session cookie is refused on /api/v1 (spec Authentication 3)', async () => {
    const withKey = await ca.req('GET', '/dashboard/api/keys', undefined, { headers: { authorization: `Bearer ${a.keys.test.secret}` } });
    expect(withKey.status).toBe(401);
    const r = await fetch(`${h.svc}/api/v1/balance`, { headers: { authorization: `Bearer ${a.keys.test.secret}`, cookie: `anm_session=${ca.cookie}` } });
    expect(r.status).toBe(401);
    const ok = await fetch(`${h.svc}/api/v1/balance`, { headers: { authorization: `Bearer ${a.keys.test.secret}` } });
    expect(ok.status).toBe(200);
  });

  it('logout revokes the session on the server', async () => {
    const c = dashClient(h.svc);
    await c.login(a.dashboard.email, a.dashboard.password);
    const cookie = c.cookie;
    expect((await c.req('POST', '/dashboard/api/logout')).status).toBe(200);
    const again = dashClient(h.svc);
    again.cookie = cookie;
    expect((await again.req('GET', '/dashboard/api/me')).status).toBe(401);
  });
});

describe('dashboard pages as JSON (DESIGN §7 Pages)', () => {
  it('keys: create shows the secret once, the list never; revoke stops the key at once (spec Authentication 5, 10)', async () => {
    const made = await ca.req('POST', '/dashboard/api/keys', { kind: 'secret' });
    expect(made.status).toBe(201);
    const key = made.json.key as string;
    expect(key).toMatch(/^ask_test_[A-Za-z0-9]{32}$/);
    const list = await ca.req('GET', '/dashboard/api/keys');
    expect(list.text).not.toContain(key);
    expect((await fetch(`${h.svc}/api/v1/balance`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(200);
    const listed = (list.json.data as Array<{ id: string; last_used_at: string | null }>).find((k) => k.id === made.json.id);
    expect(listed).toBeDefined();
    expect((await ca.req('POST', `/dashboard/api/keys/${String(made.json.id)}/revoke`)).status).toBe(200);
    expect((await fetch(`${h.svc}/api/v1/balance`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(401);
    const used = ((await ca.req('GET', '/dashboard/api/keys')).json.data as Array<{ id: string; last_used_at: string | null; revoked_at: string | null }>).find((k) => k.id === made.json.id)!;
    expect(used.revoked_at).not.toBeNull();
    expect(used.last_used_at).not.toBeNull();
  });

  it("another merchant's ids are 404 on every dashboard route", async () => {
    const bKey = (await h.services.db.query<{ id: string }>(`SELECT id FROM api_keys WHERE merchant = $1 LIMIT 1`, [b.merchant_id])).rows[0]!.id;
    const cases: Array<[string, string]> = [
      ['GET', `/dashboard/api/payments/${bIntent}`],
      ['GET', `/dashboard/api/payments/${bIntent}/events`],
      ['GET', `/dashboard/payments/${bIntent}`],
      ['POST', `/dashboard/api/keys/${bKey}/revoke`],
      ['GET', `/dashboard/api/webhooks/deliveries/wd_${'0'.repeat(24)}`],
      ['POST', `/dashboard/api/sessions/ses_${'a'.repeat(24)}/revoke`],
    ];
    for (const [method, p] of cases) expect((await ca.req(method, p)).status, `${method} ${p}`).toBe(404);
    const list = await ca.req('GET', '/dashboard/api/payments');
    expect(list.text).not.toContain(bIntent);
  });

  it('payments: filters by status, order id and dates, pages with a cursor, one payment with its journal', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await h.intent(a.keys.test.secret, { amount: '2', merchant_order_id: `ord-${i}`, description: `<b>bold ${i}</b>` })).id);
    const page1 = await ca.req('GET', '/dashboard/api/payments?limit=2');
    expect(page1.json.has_more).toBe(true);
    const first = page1.json.data as Array<{ id: string; description: string }>;
    expect(first.map((p) => p.id)).toEqual([ids[2], ids[1]]);
    expect(first[0]!.description).toBe('<b>bold 2</b>');
    const page2 = await ca.req('GET', `/dashboard/api/payments?limit=2&starting_after=${first[1]!.id}`);
    expect((page2.json.data as Array<{ id: string }>)[0]!.id).toBe(ids[0]);
    const byOrder = await ca.req('GET', '/dashboard/api/payments?order_id=ord-1');
    expect((byOrder.json.data as Array<{ id: string }>).map((p) => p.id)).toEqual([ids[1]]);
    const byStatus = await ca.req('GET', '/dashboard/api/payments?status=PAID');
    expect(byStatus.json.data).toEqual([]);
    const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
    expect((await ca.req('GET', `/dashboard/api/payments?from=${tomorrow}`)).json.data).toEqual([]);
    expect((await ca.req('GET', '/dashboard/api/payments?status=NOPE')).status).toBe(400);
    const one = await ca.req('GET', `/dashboard/api/payments/${ids[0]}`);
    expect(one.json.payment).toMatchObject({ id: ids[0], status: 'AWAITING_PAYMENT' });
    expect((one.json.timeline as Array<{ seq: number }>)[0]!.seq).toBe(1);
  });

  it('mode switch scopes every page: live keys and payments are not test ones', async () => {
    const test = (await ca.req('GET', '/dashboard/api/keys')).json.data as Array<{ id: string }>;
    expect((await ca.req('POST', '/dashboard/api/mode', { mode: 'live' })).status).toBe(200);
    const live = await ca.req('GET', '/dashboard/api/keys');
    expect(live.json.mode).toBe('live');
    expect((live.json.data as Array<{ id: string }>).some((k) => test.some((t) => t.id === k.id))).toBe(false);
    expect((await ca.req('GET', '/dashboard/api/payments')).json.data).toEqual([]);
    const home = await ca.req('GET', '/dashboard/api/home');
    expect(home.json.mode).toBe('live');
    await ca.req('POST', '/dashboard/api/mode', { mode: 'test' });
    expect(((await ca.req('GET', '/dashboard/api/home')).json.recent as unknown[]).length).toBeGreaterThan(0);
  });

  it('payout address per mode, verified with the signature `anmpay payout verify` prints (DESIGN §7)', async () => {
    const file = `${h.dataDir}/live-payout.json`;
    const w = await h.cli(['wallet', 'create', '--network', 'live', '--out', file]);
    await ca.req('POST', '/dashboard/api/mode', { mode: 'live' });
    try {
      expect((await ca.req('POST', '/dashboard/api/payout', { address: 'tanm1notlive' })).status).toBe(400);
      const set = await ca.req('POST', '/dashboard/api/payout', { address: w.address });
      expect(set.json).toMatchObject({ mode: 'live', address: w.address, verified: false });
      const challenge = set.json.challenge as string;
      expect(set.json.command).toBe(`anmpay payout verify --challenge ${challenge} --wallet <payout wallet file>`);
      // A proof for another challenge (or another address) does not verify.
      const other = await h.cli(['payout', 'verify', '--challenge', 'chl_other', '--wallet', file]);
      expect((await ca.req('POST', '/dashboard/api/payout/verify', { signature: other.signature })).status).toBe(400);
      const proof = await h.cli(['payout', 'verify', '--challenge', challenge, '--wallet', file]);
      expect(proof).toMatchObject({ address: w.address, challenge });
      const ok = await ca.req('POST', '/dashboard/api/payout/verify', { signature: proof.signature });
      expect(ok.status).toBe(200);
      expect(ok.json).toMatchObject({ verified: true, challenge: null });
      expect(((await ca.req('GET', '/dashboard/api/home')).json.setup as { payout_verified: boolean }).payout_verified).toBe(true);
    } finally {
      await ca.req('POST', '/dashboard/api/mode', { mode: 'test' });
    }
    // Test mode's address is its own, provisioned verified at creation.
    expect((await ca.req('GET', '/dashboard/api/payout')).json).toMatchObject({ mode: 'test', verified: true });
  });

  it('refunds (spec rule 3, DESIGN §7): test mode 403; live: create, the unsigned transfer and the sign command, a pasted signed transaction submitted, CONFIRMED', { timeout: 90_000 }, async () => {
    // The live payout address set and verified by the test above.
    const payoutFile = `${h.dataDir}/live-payout.json`;
    const intent = await h.intent(a.keys.live.secret, { amount: '1' });
    const customer = await h.cli(['wallet', 'create', '--network', 'live', '--out', `${h.dataDir}/live-customer.json`]);
    await h.cli(['wallet', 'fund', String(customer.address), '10000000000', '--network', 'live']);
    await h.cli(['wallet', 'pay', intent.id, '--wallet', `${h.dataDir}/live-customer.json`]);
    await h.cli(['devnet', 'mine', '12', '--network', 'live']);
    expect((await ca.req('POST', '/dashboard/api/refunds', { payment_intent: intent.id })).status).toBe(403);
    await ca.req('POST', '/dashboard/api/mode', { mode: 'live' });
    try {
      await waitFor(async () => ((await ca.req('GET', `/dashboard/api/payments/${intent.id}`)).json.payment as { status: string }).status === 'PAID', 20_000, 'PAID');
      const made = await ca.req('POST', '/dashboard/api/refunds', { payment_intent: intent.id, amount: '0.3', reason: 'one item back' });
      expect(made.status).toBe(201);
      const refund = made.json.refund as { id: string; status: string; unsigned_transfer: unknown };
      expect(refund.status).toBe('REQUIRES_SIGNATURE');
      expect(made.json.command).toBe(`ANMPAY_API_KEY=<your live secret key> anmpay refund sign ${refund.id} --wallet <payout wallet file>`);
      const live = refundStream(ca.cookie, refund.id);
      expect(((await ca.req('GET', `/dashboard/api/payments/${intent.id}`)).json.refunds as Array<{ id: string }>).map((r) => r.id)).toEqual([refund.id]);
      // Signed elsewhere (here: with the payout wallet's key), pasted into the page.
      const w = await readWalletFile(payoutFile);
      const rpc = new AnmRpcClient(`${h.services.devnet!.url}/live`);
      const tx = buildRefundTx(unsignedTransferSchema.parse(refund.unsigned_transfer), { chainId: 1, publicKey: w.publicKey, nonce: await rpc.getNonce(w.address, 'pending') });
      expect((await ca.req('POST', `/dashboard/api/refunds/${refund.id}/submit`, { signed_transaction: 'zz' })).status).toBe(400);
      const sent = await ca.req('POST', `/dashboard/api/refunds/${refund.id}/submit`, { signed_transaction: encodeSignedTx(sign(tx, w.secretKey)) });
      expect(sent.status).toBe(200);
      expect(sent.json.command).toBeNull();
      await h.cli(['devnet', 'mine', '12', '--network', 'live']);
      await waitFor(async () => ((await ca.req('GET', `/dashboard/api/refunds/${refund.id}`)).json.refund as { status: string }).status === 'CONFIRMED', 20_000, 'refund CONFIRMED');
      // The stream (DESIGN §7: live data from the snapshot feed) followed it without a poll:
      // the state it opened on, then each later one, ending CONFIRMED.
      await waitFor(async () => live.statuses.at(-1) === 'CONFIRMED', 10_000, 'CONFIRMED on the stream');
      live.close();
      expect(live.statuses[0]).toBe('REQUIRES_SIGNATURE');
      expect(live.statuses).toContain('SUBMITTED');
      expect(new Set(live.ids).size).toBe(live.ids.length);
      const other = dashClient(h.svc);
      await other.login(b.dashboard.email, b.dashboard.password);
      await other.req('POST', '/dashboard/api/mode', { mode: 'live' });
      expect((await other.req('GET', `/dashboard/api/refunds/${refund.id}`)).status).toBe(404);
      expect((await other.req('GET', `/dashboard/api/refunds/${refund.id}/events`)).status).toBe(404);
    } finally {
      await ca.req('POST', '/dashboard/api/mode', { mode: 'test' });
    }
    const testIntent = await h.intent(a.keys.test.secret, { amount: '1' });
    const refused = await ca.req('POST', '/dashboard/api/refunds', { payment_intent: testIntent.id });
    expect(refused.status).toBe(403);
  });

  it('allowed widget origins are stored normalised; a non-origin is 400', async () => {
    const r = await ca.req('POST', '/dashboard/api/origins', { origins: ['https://shop.example/path', 'http://127.0.0.1:8080'] });
    expect(r.json.origins).toEqual(['https://shop.example', 'http://127.0.0.1:8080']);
    expect((await ca.req('POST', '/dashboard/api/origins', { origins: ['javascript:alert(1)'] })).status).toBe(400);
  });

  it('password change: the old password stops working, other sessions end, this one stays', async () => {
    const m = await h.merchant('Pw Shop');
    const c1 = dashClient(h.svc);
    const c2 = dashClient(h.svc);
    await c1.login(m.dashboard.email, m.dashboard.password);
    await c2.login(m.dashboard.email, m.dashboard.password);
    expect((await c1.req('POST', '/dashboard/api/password', { current: 'wrong-password-x', next: 'a-new-password-123' })).status).toBe(400);
    const r = await c1.req('POST', '/dashboard/api/password', { current: m.dashboard.password, next: 'a-new-password-123' });
    expect(r.status).toBe(200);
    expect(r.json.other_sessions_ended).toBe(1);
    expect((await c1.req('GET', '/dashboard/api/me')).status).toBe(200);
    expect((await c2.req('GET', '/dashboard/api/me')).status).toBe(401);
    expect((await dashClient(h.svc).login(m.dashboard.email, 'a-new-password-123')).status).toBe(200);
  });

  it('signup (ANMPAY_OPEN_SIGNUP=1) creates a merchant with a handle and logs it in', async () => {
    const c = dashClient(h.svc);
    await c.req('GET', '/dashboard/signup');
    const m = /"csrf":"([^"]+)"/.exec((await c.req('GET', '/dashboard/signup')).text);
    c.csrf = m![1]!;
    const r = await c.req('POST', '/dashboard/api/signup', { name: 'Signup Shop', email: `s${Date.now()}@example.com`, password: 'long-enough-pass' });
    expect(r.status).toBe(201);
    expect(r.json.handle).toBe('signup-shop');
    expect((await c.req('GET', '/dashboard/api/me')).status).toBe(200);
  });

  it('login lockout: 5 failures per account in 15 min, then 429 with Retry-After, even with the right password', async () => {
    const m = await h.merchant('Lock Shop');
    const c = dashClient(h.svc);
    for (let i = 0; i < 5; i++) {
      const r = await c.login(m.dashboard.email, 'wrong');
      expect(r.status, `attempt ${i + 1}`).toBe(401);
      expect(r.json.error?.code).toBe('login_failed');
    }
    const locked = await c.login(m.dashboard.email, m.dashboard.password);
    expect(locked.status).toBe(429);
    expect(Number(locked.headers.get('retry-after'))).toBeGreaterThan(0);
    // Five failures from this address also lock it for every account (per-IP rule).
    expect((await dashClient(h.svc).login(a.dashboard.email, a.dashboard.password)).status).toBe(429);
  });
});
