/**
 * The marketplace's HTTP app on MARKETPLACE_PORT (DESIGN §5): `buildMarketApp(deps)` returns
 * a Fastify instance that has not listened. One plugin per resource; bodies are strict JSON
 * (gateway/http/strict-json.ts) capped at 256 KiB; errors, 404 and 405 in the merchant
 * envelope (gateway/http/edge.ts). `/healthz` is the merchant port's route (DESIGN §6), so a
 * process that runs only the marketplace role answers its load balancer too.
 */
import Fastify, { type FastifyInstance } from 'fastify';
import { BODY_LIMIT, strictJsonParser } from '../http/body.ts';
import { installEdge } from '../http/edge.ts';
import { errorOptions } from '../http/error-reply.ts';
import { installMetrics } from '../http/metrics.ts';
import health from '../routes/health.ts';
import type { MarketDeps } from './deps.ts';
import discovery from './discovery.ts';
import execute from './execute.ts';
import facilitator from './facilitator.ts';
import purchases from './purchases.ts';
import quote from './quote.ts';
import resources from './resources.ts';
import search from './search.ts';
import usdcFaucet from './usdc-faucet.ts';

export async function buildMarketApp(deps: MarketDeps): Promise<FastifyInstance> {
  const app = Fastify({
    logger: deps.logger ?? false,
    bodyLimit: BODY_LIMIT,
    ...errorOptions(),
    routerOptions: { maxParamLength: 256 },
  });
  installEdge(app);
  installMetrics(app, { app: 'marketplace', operatorToken: deps.operatorToken });
  strictJsonParser(app);
  const opts = { deps };
  await app.register(health, { deps: { lifecycle: deps.lifecycle ?? { draining: false }, dbHealthy: deps.dbHealthy } });
  await app.register(resources, opts);
  await app.register(search, opts);
  await app.register(discovery, opts);
  await app.register(quote, opts);
  await app.register(purchases, opts);
  await app.register(execute, opts);
  await app.register(facilitator, opts);
  if (deps.usdcFaucet) await app.register(usdcFaucet, { ledger: deps.usdcFaucet, perIpPerMinute: deps.perIpPerMinute ?? 60 });
  return app;
}
