/** `GET /api/v1/openapi.json`: the OpenAPI 3.1 document (version 10.1.0), built once per process. */
import type { FastifyInstance } from 'fastify';
import type { GatewayDeps } from '../deps.ts';
import { JSON_TYPE } from '../http/reply.ts';
import { openApiDocument } from '../openapi.ts';

export default async function openapi(app: FastifyInstance, opts: { deps: GatewayDeps }): Promise<void> {
  let doc: string | undefined;
  app.get('/api/v1/openapi.json', async (_req, reply) => {
    doc ??= JSON.stringify(openApiDocument(opts.deps.baseUrl()));
    return reply.type(JSON_TYPE).send(doc);
  });
}
