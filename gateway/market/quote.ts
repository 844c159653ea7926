/** `POST /api/v1/route/quote` (marketplace.md "Endpoints"; DESIGN §5 "Quote"): never charges. */
import type { FastifyPluginAsync } from 'fastify';
import { z } from 'zod';
import { maxPriceAccepted } from '../../machines/money/market.ts';
import { RESOURCE_ID_FORM } from '../../runtime/market/listing-signature.ts';
import { AppError, issuesMessage } from '../errors.ts';
import { JSON_TYPE } from '../http/reply.ts';
import type { MarketDeps } from './deps.ts';
import { ipRateLimit } from './rate-limit.ts';

const quoteBody = z
  .strictObject({
    capability: z.string().max(500).optional(),
    // The listing the buyer found (its fragment names it): quoted whatever the capability (ADR 0085).
    resource_id: z.string().regex(RESOURCE_ID_FORM, 'a resource id as the listings name it: res_ and hex').optional(),
    max_price: z.string().max(100).optional(),
    // Unnamed, the quote is in USDC and `max_price` a value, as in a search without an asset.
    asset: z.enum(['USDC', 'ANM']).optional(),
    max_latency_ms: z.number().int().positive().optional(),
  })
  // Blank would match every listing (the search's browse): a quote sells one for a capability named.
  .refine((b) => b.resource_id !== undefined || (b.capability ?? '').trim() !== '', {
    path: ['capability'],
    message: 'name the capability: a word, not blank (or the listing\'s resource_id)',
  })
  .refine((b) => b.max_price === undefined || maxPriceAccepted(b.asset, b.max_price), {
    path: ['max_price'],
    message: 'a decimal string greater than zero, with no more places than the asset has (9 with no asset named)',
  });

const quote: FastifyPluginAsync<{ deps: MarketDeps }> = async (app, { deps }) => {
  app.post('/api/v1/route/quote', { onRequest: ipRateLimit(deps.perIpPerMinute ?? 60) }, async (req, reply) => {
    const r = quoteBody.safeParse(req.body);
    if (!r.success) throw new AppError('invalid_body', issuesMessage(r.error.issues));
    const { capability, resource_id, max_price, asset, max_latency_ms } = r.data;
    const ceilings = { maxPrice: max_price, asset: asset ?? 'USDC', maxLatencyMs: max_latency_ms } as const;
    const q = await deps.purchases.quoteJson(resource_id !== undefined ? { ...ceilings, resourceId: resource_id } : { ...ceilings, capability: capability ?? '' });
    void reply.code(201).type(JSON_TYPE).send(q);
  });
};

export default quote;
