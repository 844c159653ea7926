/**
 * Logins (DESIGN §7): `POST /dashboard/api/login` (email + password; 5 failures per account
 * or address in 15 minutes, then 429), logout, who am I, the mode switch, password change,
 * the account's sessions, and `POST /dashboard/api/signup` when ANMPAY_OPEN_SIGNUP=1.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { normalizeEmail, PASSWORD_MAX, PASSWORD_MIN } from '../../runtime/merchant/accounts.ts';
import { AppError } from '../errors.ts';
import { admitDash, modeOf, parseBody, type Dash } from './context.ts';

const Login = z.strictObject({ email: z.string().min(1).max(254), password: z.string().min(1).max(PASSWORD_MAX) });
const Password = z.strictObject({ current: z.string().min(1).max(PASSWORD_MAX), next: z.string().min(PASSWORD_MIN).max(PASSWORD_MAX) });
const Signup = z.strictObject({ name: z.string().trim().min(1).max(200), email: z.email().max(254), password: z.string().min(PASSWORD_MIN).max(PASSWORD_MAX) });
const ModeBody = z.strictObject({ mode: z.enum(['test', 'live']) });

export function accountRoutes(app: FastifyInstance, x: Dash): void {
  const { svc, s } = x;

  app.post('/dashboard/api/login', async (req, reply) => {
    await admitDash(x, req, reply, { public: true });
    const b = parseBody(Login, req.body);
    const subject = { kind: 'merchant' as const, account: normalizeEmail(b.email), ip: req.ip };
    const lock = await svc.limits.check(subject);
    if (lock.locked) {
      throw new AppError('rate_limited', 'Too many failed logins; try again later.', { retryAfter: lock.retryAfterS, headers: { 'Retry-After': String(lock.retryAfterS) } });
    }
    const m = await svc.accounts.verify(b.email, b.password);
    if (!m) {
      await svc.limits.fail(subject);
      throw new AppError('login_failed');
    }
    if (m.status !== 'active') throw new AppError('forbidden', 'This account is suspended.');
    await svc.limits.succeed(subject);
    const { csrf } = await s.begin(req, reply, m.id, { mode: 'test' });
    return { ok: true, csrf, redirect: '/dashboard' };
  });

  app.post('/dashboard/api/logout', async (req, reply) => {
    await admitDash(x, req, reply);
    await s.end(req, reply);
    return { ok: true, redirect: '/dashboard/login' };
  });

  app.get('/dashboard/api/me', async (req, reply) => {
    const who = await admitDash(x, req, reply);
    const m = await svc.accounts.profile(who.merchant);
    if (!m) throw new AppError('unauthorized', 'Log in first.');
    return { merchant: m, mode: who.mode, csrf: s.csrf(reply) };
  });

  app.post('/dashboard/api/mode', async (req, reply) => {
    const who = await admitDash(x, req, reply);
    const { mode } = parseBody(ModeBody, req.body);
    await svc.sessions.setData(who.sessionId, { mode });
    return { mode };
  });

  app.post('/dashboard/api/password', async (req, reply) => {
    const who = await admitDash(x, req, reply);
    const b = parseBody(Password, req.body);
    await svc.accounts.changePassword(who.merchant, b.current, b.next);
    // Whoever knew the old password is logged out everywhere else.
    const ended = await svc.sessions.revokeAll('merchant', who.merchant, who.sessionId);
    return { ok: true, other_sessions_ended: ended };
  });

  app.get('/dashboard/api/sessions', async (req, reply) => {
    const who = await admitDash(x, req, reply);
    const list = await svc.sessions.list('merchant', who.merchant);
    return {
      object: 'list',
      data: list.map((r) => ({ id: r.id, current: r.id === who.sessionId, ip: r.ip, user_agent: r.userAgent, created_at: r.createdAt, last_seen_at: r.lastSeenAt })),
    };
  });

  app.post<{ Params: { id: string } }>('/dashboard/api/sessions/:id/revoke', async (req, reply) => {
    const who = await admitDash(x, req, reply);
    if (!(await svc.sessions.revokeId('merchant', who.merchant, req.params.id))) throw new AppError('not_found');
    return { ok: true };
  });

  app.post('/dashboard/api/signup', async (req, reply) => {
    await admitDash(x, req, reply, { public: true });
    if (!svc.openSignup) throw new AppError('not_found');
    const b = parseBody(Signup, req.body);
    const created = await x.d.merchants.create({ name: b.name, email: normalizeEmail(b.email), password: b.password });
    const { csrf } = await s.begin(req, reply, created.merchant_id, { mode: 'test' });
    // The keys are shown this once, as `anmpay merchant create` shows them.
    return reply.code(201).send({ merchant_id: created.merchant_id, handle: created.handle, keys: created.keys, csrf, redirect: '/dashboard' });
  });
}

/** A page's guard: the logged-in merchant, or a redirect to the login page. */
export function pageWho(req: FastifyRequest, reply: FastifyReply): { merchant: string; mode: 'test' | 'live' } | null {
  const principal = req.anmSession?.principal;
  if (!principal) {
    void reply.redirect('/dashboard/login', 303);
    return null;
  }
  return { merchant: principal, mode: modeOf(req) };
}
