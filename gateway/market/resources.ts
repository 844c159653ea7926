/**
 * Listings (DESIGN §5 "Listings", "Discovery", "Fragment"): register with a seller's
 * signature, list in cursor pages, read one, and its free call fragment.
 */
import type { FastifyPluginAsync } from 'fastify';
import { z } from 'zod';
import type { ListingRecord } from '../../machines/listing/view.ts';
import { scanView } from '../../machines/listing/view.ts';
import { RESOURCE_ID_FORM } from '../../runtime/market/listing-signature.ts';
import { AppError } from '../errors.ts';
import { isOperator } from '../operator-auth.ts';
import { sendJson } from '../http/reply.ts';
import { baseUrl } from './base-url.ts';
import type { MarketDeps } from './deps.ts';
import { parseQuery } from './query.ts';

const pageQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(100).default(50),
  cursor: z.string().regex(RESOURCE_ID_FORM).optional(),
});
const idParams = z.object({ id: z.string() });

function toolName(name: string): string {
  return name.toLowerCase().replace(/[^a-z0-9]+/g, '_').replace(/^_+|_+$/g, '').slice(0, 64) || 'call';
}

/** A ready-to-use call fragment for an agent; never contacts the seller. */
export function fragmentOf(r: ListingRecord, base: string) {
  return {
    resource_id: r.resource_id,
    tool: {
      name: toolName(r.name),
      description: r.description || r.name,
      input_schema: r.request_schema ?? { type: 'object' },
    },
    method: r.method,
    endpoint: r.endpoint,
    example_request: r.example_request,
    example_response: r.example_response,
    pricing: r.pricing,
    accepted_assets: r.accepted_assets,
    how_to_pay: {
      // `resource_id` pins the quote to this listing (ADR 0085); `capability` is for clients that predate it.
      quote: { method: 'POST', url: `${base}/api/v1/route/quote`, body: { resource_id: r.resource_id, capability: r.name, max_price: r.pricing.total_price, asset: r.pricing.asset } },
      purchase: { method: 'POST', url: `${base}/api/v1/purchase`, headers: ['idempotency-key'], body: { intent_id: 'pi_…', payment: { legs: { seller: '…', fee: '…' } } } },
      direct: { note: 'Call the endpoint without payment: its 402 names what to pay the seller directly (no marketplace fee).', endpoint: r.endpoint },
    },
  };
}

async function lookup(deps: MarketDeps, id: string): Promise<ListingRecord> {
  const record = RESOURCE_ID_FORM.test(id) ? await deps.listings.byId(id) : null;
  if (!record) throw new AppError('not_found', 'No listing with this resource_id.');
  return record;
}

const resources: FastifyPluginAsync<{ deps: MarketDeps }> = async (app, { deps }) => {
  app.post('/api/v1/resources', async (req, reply) => {
    const { record, created } = await deps.listings.register(req.body);
    deps.index.upsert(record);
    sendJson(reply, created ? 201 : 200, record);
  });

  app.get('/api/v1/resources', async (req, reply) => {
    const q = parseQuery(pageQuery, req.query);
    const page = await deps.listings.page(q.limit, q.cursor);
    const last = page.records.at(-1);
    sendJson(reply, 200, { object: 'list', data: page.records, has_more: page.hasMore, next_cursor: page.hasMore && last ? last.resource_id : null });
  });

  app.get('/api/v1/resources/:id', async (req, reply) => {
    sendJson(reply, 200, await lookup(deps, idParams.parse(req.params).id));
  });

  app.get('/api/v1/resources/:id/fragment', async (req, reply) => {
    sendJson(reply, 200, fragmentOf(await lookup(deps, idParams.parse(req.params).id), baseUrl(deps, req)));
  });

  // Probes now (DESIGN §5 "Scanner"); operators only, so nobody can turn the scanner on a seller at will.
  app.post('/api/v1/resources/:id/scan', async (req, reply) => {
    if (!deps.scanner || !deps.operatorToken || !isOperator(req, deps.operatorToken)) throw new AppError('unauthorized', 'Send the operator token as a bearer token.');
    const id = (await lookup(deps, idParams.parse(req.params).id)).resource_id;
    const done = await deps.scanner.scanNow(id);
    if (!done) throw new AppError('not_found', 'No listing with this resource_id.');
    const record = await lookup(deps, id);
    deps.index.upsert(record);
    sendJson(reply, 200, { object: 'scan', resource_id: id, scan: scanView(done.scan), listing: record });
  });
};

export default resources;
