/**
 * The merchant service's HTTP edge: `buildApp(deps)` returns a Fastify instance that has not
 * listened yet (gateway/server.ts listens; tests listen on port 0). One plugin per resource;
 * errors, 404 and 405 in one place, all in the spec envelope.
 */
import Fastify, { type FastifyInstance } from 'fastify';
import type { GatewayDeps } from './deps.ts';
import { BODY_LIMIT, rawBodyParser } from './http/body.ts';
import { judgeBodyInTurn } from './http/body-in-turn.ts';
import { installEdge } from './http/edge.ts';
import { errorOptions } from './http/error-reply.ts';
import { installMetrics } from './http/metrics.ts';
import checkoutPages from './checkout/index.ts';
import linkPages from './commerce/link-pages.ts';
import paymentLinksApi from './commerce/links-api.ts';
import docsSite from './docs/index.ts';
import landing from './landing/index.ts';
import { openApiDocument } from './openapi.ts';
import dashboard from './dashboard/index.ts';
import pointOfSale from './pos/index.ts';
import shop from './shop/index.ts';
import balance from './routes/balance.ts';
import checkoutData from './routes/checkout-data.ts';
import health from './routes/health.ts';
import openapi from './routes/openapi.ts';
import ops from './routes/ops.ts';
import opsConsole from './ops/index.ts';
import paymentIntents from './routes/payment-intents.ts';
import refunds from './routes/refunds.ts';
import invoicesApi from './invoices/api.ts';
import invoicePages from './invoices/page.ts';
import { webhooksPlugin } from './webhooks-plugin.ts';

export async function buildApp(deps: GatewayDeps): Promise<FastifyInstance> {
  const app = Fastify({
    logger: deps.logger ?? false,
    bodyLimit: BODY_LIMIT,
    ...errorOptions(),
    // Draining is reported by /healthz; requests already on a connection are still answered.
    return503OnClosing: false,
    routerOptions: { maxParamLength: 256 },
  });
  installEdge(app);
  installMetrics(app, { app: 'merchant', operatorToken: deps.operatorToken });

  const opts = { deps };
  // On the root context: it uses Fastify's JSON parser (the raw-body parser is scoped below).
  if (deps.webhookAdmin) await app.register(webhooksPlugin, { ...deps.webhookAdmin, operatorToken: deps.operatorToken });
  await app.register(health, opts);
  await app.register(checkoutPages, opts);
  await app.register(linkPages, opts);
  // Own context: its HTML error handler applies to the invoice pages only.
  if (deps.invoices) await app.register(invoicePages, opts);
  // Own context: its session hooks, CSRF and JSON parser apply to /dashboard only.
  await app.register(dashboard, opts);
  await app.register(pointOfSale, opts);
  await app.register(shop, opts);
  // Our routes take raw bytes (checked against the limit, parsed after auth; a body over the
  // limit is refused after auth too); the parser is scoped to this context, so plugins
  // registered on the root keep Fastify's JSON parser.
  await app.register(async (api) => {
    rawBodyParser(api);
    judgeBodyInTurn(api, deps.gate);
    await api.register(paymentIntents, opts);
    await api.register(balance, opts);
    await api.register(refunds, opts);
    await api.register(paymentLinksApi, opts);
    if (deps.invoices) await api.register(invoicesApi, opts);
    await api.register(checkoutData, opts);
    await api.register(ops, opts);
  });
  await app.register(openapi, opts);
  await app.register(docsSite, { openapi: () => openApiDocument(deps.baseUrl()) });
  await app.register(landing, { marketplaceUrl: deps.marketplaceUrl });
  if (deps.opsConsole) await app.register(opsConsole, { ops: deps.opsConsole, operatorToken: deps.operatorToken, baseUrl: deps.baseUrl });
  return app;
}
