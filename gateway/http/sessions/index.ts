/**
 * Cookie sessions for the browser surfaces (dashboard, operator console), DESIGN §7.
 *
 * Usage, inside the surface's own encapsulated plugin:
 *
 *   const s = await installSessions(app, { kind: 'operator', cookieName: 'anm_ops_session',
 *     cookiePath: '/ops', store, baseUrl: deps.baseUrl });
 *   app.get('/ops/login', async (req, reply) => page({ csrf: await s.visitorCsrf(req, reply) }));
 *   app.post('/ops/api/login', async (req, reply) => {
 *     // check the token (with LoginLimits from runtime/sessions/login-limits.ts), then:
 *     await s.begin(req, reply, operatorName);   // rotates: new cookie, old session gone
 *   });
 *   app.get('/ops/api/overview', { preHandler: s.required }, ...);   // 401 without a login
 *   app.post('/ops/api/logout', async (req, reply) => s.end(req, reply));
 *
 * What it does for every route of the context it is installed in:
 * - loads the session named by the cookie into `req.anmSession` (null when there is none);
 * - refuses any request carrying `Authorization` (API keys never reach these routes): 401;
 * - on every write (POST, PUT, PATCH, DELETE) checks `Origin` against the service's own origin
 *   and the CSRF token (header `x-csrf-token`) with @fastify/csrf-protection against the
 *   session's secret: 403 `csrf_failed` otherwise. The login form's POST is covered too: a
 *   visitor gets a session with a secret (`visitorCsrf`) before logging in.
 * The cookie: HttpOnly, SameSite=Lax, Secure when the public base URL is https, scoped to
 * `cookiePath` (and `alsoPaths`); sessions end after 12 h idle (SessionStore), on `end`, or by `store.revoke*`.
 */
import { randomBytes } from 'node:crypto';
import fastifyCookie from '@fastify/cookie';
import fastifyCsrf from '@fastify/csrf-protection';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Session, SessionKind, SessionStore } from '../../../runtime/sessions/store.ts';
import { AppError } from '../../errors.ts';
import { originAllowed } from './origin.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The session named by the cookie (visitor or logged in), or null. */
    anmSession: Session | null;
    /** What @fastify/csrf-protection reads the secret from (its '@fastify/session' mode). */
    session: { _csrf?: string } | null;
  }
}

export interface SessionOptions {
  kind: SessionKind;
  /** `anm_session` for merchants. */
  cookieName: string;
  /** The surface's path prefix, e.g. `/dashboard`: the cookie is sent nowhere else. */
  cookiePath: string;
  /**
   * Other surfaces that share this login (the point of sale at `/pos`, payment-link pages at
   * `/p`): the cookie is set and cleared on each path too, so it still reaches nothing else.
   */
  alsoPaths?: readonly string[];
  store: SessionStore;
  /** The public base URL: its origin is where writes may come from, its scheme sets Secure. */
  baseUrl: () => string;
}

export interface Sessions {
  /** preHandler: 401 `unauthorized` unless the session has logged in. */
  required: (req: FastifyRequest, reply: FastifyReply) => Promise<void>;
  /** The CSRF token for pages and the JSON they post; creates a visitor session if needed. */
  visitorCsrf(req: FastifyRequest, reply: FastifyReply): Promise<string>;
  /** Logs `principal` in: the old session (if any) is deleted and a new cookie set. */
  begin(req: FastifyRequest, reply: FastifyReply, principal: string, data?: Record<string, unknown>): Promise<{ session: Session; csrf: string }>;
  /** Logs out: deletes the session and clears the cookie. */
  end(req: FastifyRequest, reply: FastifyReply): Promise<void>;
  /** The CSRF token of the request's session (after `required`). */
  csrf(reply: FastifyReply): string;
}

const UNSAFE = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

export async function installSessions(app: FastifyInstance, o: SessionOptions): Promise<Sessions> {
  if (!app.hasReplyDecorator('setCookie')) await app.register(fastifyCookie);
  await app.register(fastifyCsrf, { sessionPlugin: '@fastify/session', getToken: (req) => header(req, 'x-csrf-token') });
  app.decorateRequest('anmSession', null);
  app.decorateRequest('session', null);

  const secure = () => o.baseUrl().startsWith('https:');
  const paths = [o.cookiePath, ...(o.alsoPaths ?? [])];
  const cookieOpts = (path: string) => ({ path, httpOnly: true, sameSite: 'lax' as const, secure: secure() });
  const setSession = (req: FastifyRequest, s: Session | null) => {
    req.anmSession = s;
    req.session = s ? { _csrf: s.csrfSecret } : null;
  };

  app.addHook('onRequest', async (req) => {
    if (req.headers.authorization !== undefined) throw new AppError('unauthorized', 'API keys are not accepted here; log in to the dashboard.');
    const token = req.cookies[o.cookieName];
    setSession(req, token ? await o.store.lookup(o.kind, token) : null);
  });

  app.addHook('preHandler', (req, reply, done) => {
    if (!UNSAFE.has(req.method)) return done();
    if (!originAllowed(req, o.baseUrl())) return done(new AppError('csrf_failed', 'The request did not come from this site (Origin).'));
    // A write with no session has no CSRF secret to check against: refused here, before
    // @fastify/csrf-protection would read the secret of a session that does not exist.
    if (!req.anmSession) return done(new AppError('csrf_failed', 'No session: load the page (or log in) first.'));
    app.csrfProtection(req, reply, done);
  });

  const start = async (req: FastifyRequest, reply: FastifyReply, principal: string | null, data?: Record<string, unknown>) => {
    const { token, session } = await o.store.create({ kind: o.kind, principal, csrfSecret: randomSecret(), data, ip: req.ip, userAgent: header(req, 'user-agent') ?? null });
    for (const p of paths) void reply.setCookie(o.cookieName, token, cookieOpts(p));
    setSession(req, session);
    return session;
  };

  return {
    required: async (req) => {
      if (!req.anmSession?.principal) throw new AppError('unauthorized', 'Log in first.');
    },
    async visitorCsrf(req, reply) {
      if (!req.anmSession) await start(req, reply, null);
      return reply.generateCsrf();
    },
    async begin(req, reply, principal, data) {
      const old = req.cookies[o.cookieName];
      if (old) await o.store.revokeToken(old);
      const session = await start(req, reply, principal, data);
      return { session, csrf: reply.generateCsrf() };
    },
    async end(req, reply) {
      const token = req.cookies[o.cookieName];
      if (token) await o.store.revokeToken(token);
      setSession(req, null);
      for (const p of paths) void reply.clearCookie(o.cookieName, cookieOpts(p));
    },
    csrf: (reply) => reply.generateCsrf(),
  };
}

function header(req: FastifyRequest, name: string): string | undefined {
  const v = req.headers[name];
  return typeof v === 'string' ? v : undefined;
}

function randomSecret(): string {
  // The size @fastify/csrf draws for its own secrets (18 bytes); kept with the session row.
  return randomBytes(18).toString('base64url');
}
