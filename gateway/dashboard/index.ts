/**
 * The merchant dashboard (issue 22, DESIGN §7): pages under `/dashboard` and their JSON under
 * `/dashboard/api`, behind a cookie session (`anm_session`) with CSRF on every write. API keys
 * are refused here and the session cookie is refused on `/api/v1`. Registered on the root by
 * `buildApp` when the dashboard services are given.
 */
import type { FastifyInstance } from 'fastify';
import type { GatewayDeps } from '../deps.ts';
import { sendError } from '../http/error-reply.ts';
import { strictJsonParser } from '../http/body.ts';
import { installSessions } from '../http/sessions/index.ts';
import { accountRoutes } from './accounts.ts';
import { streamBook } from './context.ts';
import { homeRoutes } from './home.ts';
import { keyRoutes } from './keys.ts';
import { linkRoutes } from './links.ts';
import { pageRoutes } from './pages.ts';
import { paymentRoutes } from './payments.ts';
import { refundRoutes } from './refunds.ts';
import { MERCHANT_SESSION_PATHS, SESSION_COOKIE } from './session-paths.ts';
import { invoiceRoutes } from './invoices.ts';
import { settingsRoutes } from './settings.ts';
import { webhookRoutes } from './webhooks.ts';

export { SESSION_COOKIE } from './session-paths.ts';

export default async function dashboard(app: FastifyInstance, opts: { deps: GatewayDeps }): Promise<void> {
  const d = opts.deps;
  const svc = d.dashboard;
  if (!svc) return;
  strictJsonParser(app);
  app.setErrorHandler((err, req, reply) => sendError(req, reply, err));
  const s = await installSessions(app, { kind: 'merchant', cookieName: SESSION_COOKIE, ...MERCHANT_SESSION_PATHS.for('/dashboard'), store: svc.sessions, baseUrl: d.baseUrl });
  const x = { d, svc, s };
  const streams = streamBook(app);
  accountRoutes(app, x);
  pageRoutes(app, x);
  homeRoutes(app, x);
  keyRoutes(app, x);
  paymentRoutes(app, x, streams);
  webhookRoutes(app, x);
  settingsRoutes(app, x);
  refundRoutes(app, x, streams);
  linkRoutes(app, x);
  invoiceRoutes(app, x, streams);
}
