/**
 * `/metrics` alone on METRICS_PORT, for a process whose roles serve no HTTP app (a runtime or
 * indexer process in a split deployment, docs/deploy.md): without it their actor, outbox,
 * timer, webhook and indexer series could not be scraped. Same access rule as on the apps
 * (operator token as bearer, ADR 0027), same envelope for anything else.
 */
import Fastify from 'fastify';
import { installEdge } from './edge.ts';
import { errorOptions } from './error-reply.ts';
import { installMetrics } from './metrics.ts';

export interface MetricsServer {
  url: string;
  close(): Promise<void>;
}

export async function startMetricsServer(o: { host: string; port: number; operatorToken: string }): Promise<MetricsServer> {
  const app = Fastify({ logger: false, ...errorOptions() });
  installEdge(app);
  installMetrics(app, { app: 'metrics', operatorToken: o.operatorToken });
  const url = await app.listen({ host: o.host, port: o.port });
  return { url, close: () => app.close() };
}
