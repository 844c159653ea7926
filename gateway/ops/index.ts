/**
 * The operator console (`/ops`, DESIGN §7 "Operator console"): pages, their JSON and live
 * streams in one encapsulated context behind operator cookie sessions (gateway/http/sessions/):
 * the cookie `anm_ops_session` is scoped to `/ops`, only sessions of kind `operator` count (a
 * merchant's dashboard session is not one), any `Authorization` header (an API key, even the
 * operator token as a bearer) is refused, and every write checks Origin and the CSRF token.
 * The bearer-token operator API (`/ops/api/*`, gateway/routes/ops.ts) is a separate context.
 */
import type { FastifyInstance } from 'fastify';
import { installSessions } from '../http/sessions/index.ts';
import { rawBodyParser } from '../http/body.ts';
import { opsData } from './data.ts';
import type { OpsConsoleDeps } from './deps.ts';
import { opsPages } from './pages.ts';
import { opsStreams } from './streams.ts';

export const OPS_COOKIE = 'anm_ops_session';

export default async function opsConsole(app: FastifyInstance, opts: { ops: OpsConsoleDeps; operatorToken: string; baseUrl: () => string }): Promise<void> {
  const d = opts.ops;
  rawBodyParser(app);
  const sessions = await installSessions(app, { kind: 'operator', cookieName: OPS_COOKIE, cookiePath: '/ops', store: d.sessions, baseUrl: opts.baseUrl });
  opsPages(app, d, sessions, opts.operatorToken);
  await app.register(async (guarded) => {
    guarded.addHook('preHandler', sessions.required);
    opsData(guarded, d);
    opsStreams(guarded, d);
  });
  // The payment intent's chart takes ELK a second or two (in a worker thread): every kind is laid
  // out when the console is first visited (the login or overview page), not on each actor page,
  // and not at start-up, where processes that never serve /ops would pay it.
  let warmed = false;
  app.addHook('onRequest', async () => {
    if (warmed) return;
    warmed = true;
    for (const kind of d.console.kinds()) void d.console.layout(kind).catch(() => undefined);
  });
}
