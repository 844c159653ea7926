/** `POST /api/v1/route/quote` (marketplace.md "Endpoints"; DESIGN §5 "Quote"): never charges. */
import type { FastifyPluginAsync } from 'fastify';
import { z } from 'zod';
import { maxPriceAccepted } from '../../machines/money/market.ts';
import { AppError } from '../errors.ts';
import { JSON_TYPE } from '../http/reply.ts';
import type { MarketDeps } from './deps.ts';
import { ipRateLimit } from './rate-limit.ts';

const quoteBody = z
  .strictObject({
    // Blank would match every listing (the search's browse): a quote sells one for a capability named.
    capability: z
      .string()
      .max(500)
      .refine((c) => c.trim() !== '', 'name the capability: a word, not blank'),
    max_price: z.string().max(100).optional(),
    // Unnamed, the quote is in USDC and `max_price` a value, as in a search without an asset.
    asset: z.enum(['USDC', 'ANM']).optional(),
    max_latency_ms: z.number().int().positive().optional(),
  })
  .refine((b) => b.max_price === undefined || maxPriceAccepted(b.asset, b.max_price), {
    path: ['max_price'],
    message: 'a decimal string greater than zero, with no more places than the asset has (9 with no asset named)',
  });

const quote: FastifyPluginAsync<{ deps: MarketDeps }> = async (app, { deps }) => {
  app.post('/api/v1/route/quote', { onRequest: ipRateLimit(deps.perIpPerMinute ?? 60) }, async (req, reply) => {
    const r = quoteBody.safeParse(req.body);
    if (!r.success) throw new AppError('invalid_body', r.error.issues.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`).join('; '));
    const q = await deps.purchases.quoteJson({ capability: r.data.capability, maxPrice: r.data.max_price, asset: r.data.asset ?? 'USDC', maxLatencyMs: r.data.max_latency_ms });
    void reply.code(201).type(JSON_TYPE).send(q);
  });
};

export default quote;
