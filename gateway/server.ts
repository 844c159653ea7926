/**
 * Listening and draining for the merchant HTTP edge. `bin/services.ts` starts it; stop
 * order: drain (/healthz 503), close the listener and finish in-flight requests, then the
 * caller stops the engine and closes storage.
 */
import type { FastifyInstance } from 'fastify';
import { buildApp } from './app.ts';
import type { GatewayDeps } from './deps.ts';
import { drainer } from './http/drain.ts';
import { gatewayBucketKinds } from '../runtime/merchant/rate-buckets.ts';

export interface HttpEdge {
  app: FastifyInstance;
  /** Where it listens, e.g. `http://127.0.0.1:3000`. */
  url: string;
  drain(): void;
  close(): Promise<void>;
}

export interface ListenOptions {
  host: string;
  port: number;
  /** PUBLIC_BASE_URL; defaults to the listening address. */
  publicBaseUrl?: string | undefined;
  /** HTTP_DRAIN_MS: on close, /healthz answers 503 this long before the listener closes. */
  drainMs?: number;
  /** How often the process sweeps idempotency keys, rate buckets and sessions (10 minutes). */
  sweepMs?: number;
}

const SWEEP_MS = 10 * 60 * 1000;

export async function startHttp(deps: Omit<GatewayDeps, 'baseUrl' | 'lifecycle'>, listen: ListenOptions): Promise<HttpEdge> {
  const { lifecycle, drain, drained } = drainer(listen.drainMs);
  let url = '';
  const app = await buildApp({ ...deps, lifecycle, baseUrl: () => listen.publicBaseUrl ?? url });
  url = await app.listen({ host: listen.host, port: listen.port });
  const bucketKinds = gatewayBucketKinds(deps.gate.limits, deps.commerce?.payPerIpPerMinute);
  const sweep = setInterval(() => {
    void deps.idempotency.sweep().catch(() => undefined);
    void deps.rateBuckets?.sweep(bucketKinds).catch(() => undefined);
    void deps.dashboard?.sessions.sweep().catch(() => undefined);
  }, listen.sweepMs ?? SWEEP_MS);
  sweep.unref();
  return {
    app,
    url,
    drain,
    async close() {
      clearInterval(sweep);
      await drained();
      await app.close();
    },
  };
}
