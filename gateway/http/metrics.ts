/**
 * `/metrics` (Prometheus text, prom-client) and the per-request counter behind
 * `anm_http_requests_total`, for every app of the service (ADR 0027). The scrape needs
 * `Authorization: Bearer <operator token>`: the series show traffic and backlog an outsider
 * should not see, and Prometheus sends a bearer token natively (`authorization` in its scrape
 * config). Neither the scrape nor the health check is logged at info: a scraper every few
 * seconds would drown the request log.
 */
import type { FastifyInstance } from 'fastify';
import { httpRecorder, scrape, scrapeContentType } from '../../runtime/ops/metrics.ts';
import { AppError } from '../errors.ts';
import { isOperator } from '../operator-auth.ts';

export interface MetricsOptions {
  /** The `app` label: `merchant` or `marketplace`. */
  app: string;
  /** Without a token the app counts requests but serves no `/metrics`. */
  operatorToken?: string | undefined;
}

export function installMetrics(app: FastifyInstance, o: MetricsOptions): void {
  const record = httpRecorder(o.app);
  // A callback hook: it runs on every request, and the route template is already known here.
  app.addHook('onResponse', (req, reply, done) => {
    record(req.method, req.routeOptions.url, reply.statusCode);
    done();
  });
  const token = o.operatorToken;
  if (token === undefined) return;
  app.get('/metrics', { logLevel: 'warn' }, async (req, reply) => {
    if (!isOperator(req, token)) throw new AppError('unauthorized', 'Send the operator token as a bearer token.');
    const body = await scrape();
    return reply.header('Cache-Control', 'no-store').type(scrapeContentType).send(body);
  });
}
