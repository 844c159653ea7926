/**
 * The console's pages and its login. Each page is the shell (html.ts) with the data it opens
 * with, so the first paint needs no second request; the elements then read `/ops/data/*` and
 * follow `/ops/streams/*`. Without an operator session a page redirects to `/ops/login`.
 *
 * Login: the operator token typed into a form, posted as JSON (`POST /ops/login`, with the
 * visitor session's CSRF token) and compared in constant time; never in a URL. Failed logins
 * are counted per address (5 per 15 minutes, then 429).
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { uiBundle } from '../../ui/build.ts';
import { sendPage } from '../checkout/headers.ts';
import { AppError } from '../errors.ts';
import { jsonBody } from '../http/body.ts';
import { sendJson } from '../http/reply.ts';
import type { Sessions } from '../http/sessions/index.ts';
import { actorView, parseQuery } from './data.ts';
import type { OpsConsoleDeps } from './deps.ts';
import { opsHtml, type OpsView } from './html.ts';

/** The principal of every operator session: there is one operator identity, the token. */
export const OPERATOR = 'operator';

/**
 * Equal-length digests make the comparison constant-time whatever was typed (timingSafeEqual
 * needs equal lengths, and comparing lengths first would tell the token's length).
 */
export function tokenMatches(given: string, token: string): boolean {
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(token).digest();
  return timingSafeEqual(a, b);
}

const LoginBody = z.strictObject({ token: z.string().min(1).max(512) });
const ListQuery = z.strictObject({ kind: z.string().max(64).optional(), state: z.string().max(64).optional(), merchant: z.string().max(128).optional(), prefix: z.string().max(128).optional() });

export function opsPages(app: FastifyInstance, d: OpsConsoleDeps, s: Sessions, operatorToken: string): void {
  const page = async (reply: FastifyReply, status: number, view: OpsView, title: string, data: Record<string, unknown>, loggedIn = true) => {
    const b = await uiBundle();
    return sendPage(reply, status, opsHtml(view, title, data, { js: b.opsJs.path, css: b.opsCss.path, icon: b.icon.path }, loggedIn));
  };
  /** A page of the console: the login page instead when the session has not logged in. */
  const loggedIn = (req: FastifyRequest) => Boolean(req.anmSession?.principal);
  const toLogin = (reply: FastifyReply) => reply.code(303).header('Location', '/ops/login').header('Cache-Control', 'no-store').send();

  app.get('/ops/login', async (req, reply) => {
    if (loggedIn(req)) return reply.code(303).header('Location', '/ops').send();
    return page(reply, 200, 'login', 'Log in', { csrf: await s.visitorCsrf(req, reply) }, false);
  });

  app.post('/ops/login', async (req, reply) => {
    const parsed = LoginBody.safeParse(jsonBody(req) ?? {});
    if (!parsed.success) throw new AppError('invalid_body', 'Send {"token": "<operator token>"}.');
    const subject = { kind: 'operator' as const, account: OPERATOR, ip: req.ip };
    const lock = await d.loginLimits?.check(subject);
    if (lock?.locked) throw new AppError('rate_limited', 'Too many failed logins; try again later.', { retryAfter: lock.retryAfterS, headers: { 'Retry-After': String(lock.retryAfterS) } });
    if (!tokenMatches(parsed.data.token, operatorToken)) {
      await d.loginLimits?.fail(subject);
      throw new AppError('unauthorized', 'That is not the operator token.');
    }
    await d.loginLimits?.succeed(subject);
    const { csrf } = await s.begin(req, reply, OPERATOR);
    sendJson(reply, 200, { ok: true, csrf });
    return reply;
  });

  app.post('/ops/logout', async (req, reply) => {
    await s.end(req, reply);
    sendJson(reply, 200, { ok: true });
    return reply;
  });

  app.get('/ops', async (req, reply) => {
    if (!loggedIn(req)) return toLogin(reply);
    return page(reply, 200, 'overview', 'Overview', { csrf: s.csrf(reply), overview: await d.console.overview() });
  });

  app.get('/ops/actors', async (req, reply) => {
    if (!loggedIn(req)) return toLogin(reply);
    const q = parseQuery(ListQuery, req);
    const filter = { kind: q.kind || undefined, state: q.state || undefined, merchant: q.merchant || undefined, idPrefix: q.prefix || undefined };
    const first = await d.console.actors.list({ ...filter, limit: 50 });
    return page(reply, 200, 'actors', 'Actors', { csrf: s.csrf(reply), kinds: d.console.kinds(), filter: q, page: first });
  });

  app.get<{ Params: { id: string } }>('/ops/actors/:id', async (req, reply) => {
    if (!loggedIn(req)) return toLogin(reply);
    const view = await actorView(d, req.params.id);
    if (!view) return page(reply, 404, 'actor', 'No such actor', { csrf: s.csrf(reply), missing: req.params.id });
    return page(reply, 200, 'actor', view.actor.id, { csrf: s.csrf(reply), ...view });
  });
}
