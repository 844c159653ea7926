/** `POST /api/v1/route/quote` (marketplace.md "Endpoints"; DESIGN §5 "Quote"): never charges. */
import type { FastifyPluginAsync } from 'fastify';
import { z } from 'zod';
import { parseAtomicDecimal } from '../../machines/money/market.ts';
import { AppError } from '../errors.ts';
import { JSON_TYPE } from '../http/reply.ts';
import type { QuoteInput } from '../../runtime/market/purchases.ts';
import type { MarketDeps } from './deps.ts';
import { ipRateLimit } from './rate-limit.ts';

export const quoteBody = z
  .strictObject({
    capability: z.string().min(1).max(500),
    max_price: z.string().max(100).optional(),
    asset: z.enum(['USDC', 'ANM']).default('USDC'),
    max_latency_ms: z.number().int().positive().optional(),
  })
  .refine((b) => b.max_price === undefined || parseAtomicDecimal(b.asset, b.max_price) !== null, { path: ['max_price'], message: 'a decimal string greater than zero in the asset units' });

const KEYS = new Set(['capability', 'max_price', 'asset', 'max_latency_ms']);

/**
 * The quote a body asks for when it is plainly valid, else undefined and `quoteBody` decides
 * (with its messages): accepts nothing the schema refuses, and reads what it accepts as the
 * schema does, at a fraction of its CPU on the route's every request.
 */
export function plainQuote(body: unknown): QuoteInput | undefined {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return undefined;
  const b = body as Record<string, unknown>;
  for (const k in b) if (!KEYS.has(k)) return undefined;
  const { capability, max_price, asset = 'USDC', max_latency_ms } = b;
  if (typeof capability !== 'string' || capability.length < 1 || capability.length > 500) return undefined;
  if (asset !== 'USDC' && asset !== 'ANM') return undefined;
  if (max_price !== undefined && (typeof max_price !== 'string' || max_price.length > 100 || parseAtomicDecimal(asset, max_price) === null)) return undefined;
  if (max_latency_ms !== undefined && (typeof max_latency_ms !== 'number' || !Number.isSafeInteger(max_latency_ms) || max_latency_ms <= 0)) return undefined;
  return { capability, maxPrice: max_price, asset, maxLatencyMs: max_latency_ms };
}

const quote: FastifyPluginAsync<{ deps: MarketDeps }> = async (app, { deps }) => {
  app.post('/api/v1/route/quote', { preHandler: ipRateLimit(deps.perIpPerMinute ?? 60) }, async (req, reply) => {
    let q = plainQuote(req.body);
    if (!q) {
      const r = quoteBody.safeParse(req.body);
      if (!r.success) throw new AppError('invalid_body', r.error.issues.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`).join('; '));
      q = { capability: r.data.capability, maxPrice: r.data.max_price, asset: r.data.asset, maxLatencyMs: r.data.max_latency_ms };
    }
    void reply.code(201).type(JSON_TYPE).send(await deps.purchases.quoteJson(q));
  });
};

export default quote;
