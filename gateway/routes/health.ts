/**
 * `GET /healthz`: 200 while this process should get traffic; 503 while draining or when the
 * database does not answer. Served on the merchant port and the marketplace port alike.
 */
import type { FastifyInstance } from 'fastify';
import type { GatewayDeps } from '../deps.ts';
import { sendJson } from '../http/reply.ts';

export default async function health(app: FastifyInstance, opts: { deps: Pick<GatewayDeps, 'lifecycle' | 'dbHealthy'> }): Promise<void> {
  const d = opts.deps;
  // Not logged at info: balancers call it every few seconds.
  app.get('/healthz', { logLevel: 'warn' }, async (_req, reply) => {
    if (d.lifecycle.draining) sendJson(reply, 503, { status: 'draining' });
    else if (!(await d.dbHealthy())) sendJson(reply, 503, { status: 'database_unreachable' });
    else sendJson(reply, 200, { status: 'ok' });
    return reply;
  });
}
