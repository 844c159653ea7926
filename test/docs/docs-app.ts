/**
 * The docs site and landing page on a bare app for tests: the same plugins `buildApp`
 * registers (edge, assets, OpenAPI document, docs, landing), without a database.
 */
import Fastify, { type FastifyInstance } from 'fastify';
import assets from '../../gateway/checkout/assets.ts';
import type { GatewayDeps } from '../../gateway/deps.ts';
import docsSite from '../../gateway/docs/index.ts';
import { installEdge } from '../../gateway/http/edge.ts';
import { errorOptions } from '../../gateway/http/error-reply.ts';
import landing from '../../gateway/landing/index.ts';
import { openApiDocument } from '../../gateway/openapi.ts';
import openapi from '../../gateway/routes/openapi.ts';

export async function docsApp(o: { dir?: string; marketplaceUrl?: string } = {}): Promise<FastifyInstance> {
  const app = Fastify({ ...errorOptions() });
  installEdge(app);
  const baseUrl = () => 'http://127.0.0.1';
  await app.register(assets);
  // The OpenAPI route reads nothing but the base URL.
  await app.register(openapi, { deps: { baseUrl } as GatewayDeps });
  await app.register(docsSite, { openapi: () => openApiDocument(baseUrl()), ...(o.dir ? { dir: o.dir } : {}) });
  await app.register(landing, { marketplaceUrl: () => o.marketplaceUrl });
  return app;
}
