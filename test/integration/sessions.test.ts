/**
 * The session layer (gateway/http/sessions/) over real HTTP and storage: DESIGN §7 "Login"
 * (cookie flags, rotation on login, 12 h idle expiry, revoke on logout, CSRF token double
 * checked with Origin, API keys refused) and the failed-login lockout (5 per 15 min).
 */
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installEdge } from '../../gateway/http/edge.ts';
import { errorOptions } from '../../gateway/http/error-reply.ts';
import { installSessions } from '../../gateway/http/sessions/index.ts';
import { LoginLimits } from '../../runtime/sessions/login-limits.ts';
import { SESSION_IDLE_MS, SessionStore } from '../../runtime/sessions/store.ts';
import { openEmbedded, openReal, realAvailable, type Backend } from '../helpers/backends.ts';

let backend: Backend;
let app: FastifyInstance;
let url: string;
let base = '';
let store: SessionStore;

beforeAll(async () => {
  backend = realAvailable ? await openReal({ poolSize: 4 }) : await openEmbedded();
  store = new SessionStore(backend.db);
  app = Fastify({ ...errorOptions() });
  installEdge(app);
  await app.register(async (x) => {
    const s = await installSessions(x, { kind: 'operator', cookieName: 'anm_t', cookiePath: '/x', store, baseUrl: () => base || url });
    x.get('/x/login', async (req, reply) => ({ csrf: await s.visitorCsrf(req, reply) }));
    x.post('/x/api/login', async (req, reply) => ({ csrf: (await s.begin(req, reply, 'op1')).csrf }));
    x.get('/x/api/me', { preHandler: s.required }, async (req) => ({ principal: req.anmSession?.principal, csrf: undefined }));
    x.post('/x/api/write', { preHandler: s.required }, async () => ({ ok: true }));
    x.post('/x/api/logout', { preHandler: s.required }, async (req, reply) => {
      await s.end(req, reply);
      return { ok: true };
    });
  });
  url = await app.listen({ host: '127.0.0.1', port: 0 });
});

afterAll(async () => {
  await app?.close();
  await backend?.close();
});

const cookieOf = (r: Response) => /anm_t=([^;]*)/.exec(r.headers.get('set-cookie') ?? '')?.[1] ?? '';

async function call(path: string, o: { method?: string; cookie?: string; csrf?: string; origin?: string | null; headers?: Record<string, string> } = {}) {
  const method = o.method ?? 'GET';
  const headers: Record<string, string> = { ...o.headers };
  if (o.cookie) headers.cookie = `anm_t=${o.cookie}`;
  if (o.csrf) headers['x-csrf-token'] = o.csrf;
  if (method !== 'GET' && o.origin !== null) headers.origin = o.origin ?? url;
  const r = await fetch(url + path, { method, headers });
  const body = (await r.json()) as { csrf?: string; principal?: string; error?: { code: string } };
  return { r, body };
}

async function login(): Promise<{ visitor: string; cookie: string; csrf: string }> {
  const v = await call('/x/login');
  const visitor = cookieOf(v.r);
  const l = await call('/x/api/login', { method: 'POST', cookie: visitor, csrf: v.body.csrf! });
  expect(l.r.status).toBe(200);
  return { visitor, cookie: cookieOf(l.r), csrf: l.body.csrf! };
}

describe('sessions (DESIGN §7 Login)', () => {
  it('sets the cookie HttpOnly, SameSite=Lax, scoped to the surface, Secure only behind https', async () => {
    const v = await call('/x/login');
    const set = v.r.headers.get('set-cookie')!;
    expect(set).toMatch(/HttpOnly/);
    expect(set).toMatch(/SameSite=Lax/);
    expect(set).toMatch(/Path=\/x/);
    expect(set).not.toMatch(/Secure/);
    base = 'https://pay.example';
    try {
      expect((await call('/x/login')).r.headers.get('set-cookie')).toMatch(/Secure/);
    } finally {
      base = '';
    }
  });

  it('rotates on login: the cookie set before login is not the one after, and no longer works', async () => {
    const { visitor, cookie } = await login();
    expect(cookie).not.toBe('');
    expect(cookie).not.toBe(visitor);
    expect((await call('/x/api/me', { cookie })).body.principal).toBe('op1');
    expect((await call('/x/api/me', { cookie: visitor })).r.status).toBe(401);
    expect(await store.lookup('operator', visitor)).toBeNull();
  });

  it('a write needs the CSRF token of its own session and this site as Origin: 403 csrf_failed', async () => {
    const { cookie, csrf } = await login();
    const other = await login();
    const cases: Array<[string, Parameters<typeof call>[1], number]> = [
      ['token and Origin', { cookie, csrf }, 200],
      ['no token', { cookie }, 403],
      ["another session's token", { cookie, csrf: other.csrf }, 403],
      ['foreign Origin', { cookie, csrf, origin: 'https://evil.example' }, 403],
      ['no Origin', { cookie, csrf, origin: null }, 403],
      ['Origin "null"', { cookie, csrf, origin: 'null' }, 403],
      // No session at all: no secret to check a token against (was a 500 from the CSRF plugin).
      ['no session, a token', { csrf }, 403],
      ['no session, no token', {}, 403],
    ];
    for (const [name, o, status] of cases) {
      const { r, body } = await call('/x/api/write', { method: 'POST', ...o });
      expect(r.status, name).toBe(status);
      if (status === 403) expect(body.error?.code, name).toBe('csrf_failed');
    }
    // The login form's POST too: without the visitor's token it is refused.
    const v = await call('/x/login');
    expect((await call('/x/api/login', { method: 'POST', cookie: cookieOf(v.r) })).r.status).toBe(403);
  });

  it('refuses any request carrying Authorization (API keys), even with a good session', async () => {
    const { cookie } = await login();
    const { r, body } = await call('/x/api/me', { cookie, headers: { authorization: 'Bearer ask_test_' + 'a'.repeat(32) } });
    expect(r.status).toBe(401);
    expect(body.error?.code).toBe('unauthorized');
  });

  it('logout revokes the session on the server, not only in the browser', async () => {
    const { cookie, csrf } = await login();
    const out = await call('/x/api/logout', { method: 'POST', cookie, csrf });
    expect(out.r.status).toBe(200);
    expect(out.r.headers.get('set-cookie')).toMatch(/anm_t=;/);
    expect((await call('/x/api/me', { cookie })).r.status).toBe(401);
  });

  it('expires a session after the 12 h idle limit, and revokes all but one on request', async () => {
    const { token, session } = await store.create({ kind: 'operator', principal: 'op2', csrfSecret: 's' });
    expect((await store.lookup('operator', token))?.principal).toBe('op2');
    expect(await store.lookup('merchant', token)).toBeNull();
    // Idle time written into the row, not waited for: a limit short enough to wait out could pass between two statements.
    const idleFor = (ms: number) => backend.db.query(`UPDATE sessions SET last_seen_at = now() - make_interval(secs => $2::double precision / 1000) WHERE id = $1`, [session.id, ms]);
    await idleFor(SESSION_IDLE_MS - 60_000);
    expect((await store.lookup('operator', token))?.principal).toBe('op2');
    await idleFor(SESSION_IDLE_MS + 1_000);
    expect(await store.lookup('operator', token)).toBeNull();
    expect(await store.sweep()).toBeGreaterThan(0);
    expect((await backend.db.query(`SELECT 1 FROM sessions WHERE id = $1`, [session.id])).rows).toEqual([]);

    const a = await store.create({ kind: 'operator', principal: 'op3', csrfSecret: 's' });
    const b = await store.create({ kind: 'operator', principal: 'op3', csrfSecret: 's' });
    expect((await store.list('operator', 'op3')).map((s) => s.id).sort()).toEqual([a.session.id, b.session.id].sort());
    expect(await store.revokeAll('operator', 'op3', a.session.id)).toBe(1);
    expect(await store.lookup('operator', b.token)).toBeNull();
    expect(await store.revokeId('operator', 'someone-else', a.session.id)).toBe(false);
    expect(await store.revokeId('operator', 'op3', a.session.id)).toBe(true);
  });
});

describe('login lockout (DESIGN §7: 5 per 15 min per account and per IP)', () => {
  it('locks an account after 5 failures from any address, and an address after 5 on any accounts', async () => {
    const limits = new LoginLimits(backend.db);
    const acct = { kind: 'merchant' as const, account: `a-${Date.now()}@x`, ip: '10.0.0.1' };
    for (let i = 0; i < 5; i++) {
      expect((await limits.check({ ...acct, ip: `10.0.1.${i}` })).locked).toBe(false);
      await limits.fail({ ...acct, ip: `10.0.1.${i}` });
    }
    const locked = await limits.check(acct);
    expect(locked.locked).toBe(true);
    if (locked.locked) expect(locked.retryAfterS).toBeGreaterThan(800);

    const ip = `10.9.${Date.now() % 200}.1`;
    for (let i = 0; i < 5; i++) await limits.fail({ kind: 'merchant', account: `b${i}-${Date.now()}@x`, ip });
    expect((await limits.check({ kind: 'merchant', account: 'fresh@x', ip })).locked).toBe(true);
    expect((await limits.check({ kind: 'operator', account: 'fresh@x', ip })).locked).toBe(false);
  });
});
