/**
 * Per-IP token buckets of the marketplace's paid-path routes (DESIGN §5 "Errors": 60/min on
 * quote, purchase and execute). In-process: each marketplace process enforces its own share.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../errors.ts';
import { KeyedBuckets } from '../http/keyed-buckets.ts';

export function ipRateLimit(perMinute: number, clock: () => number = Date.now) {
  const buckets = new KeyedBuckets(perMinute, clock);
  return async (req: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const t = buckets.take(req.ip);
    void reply.header('X-RateLimit-Limit', String(perMinute));
    void reply.header('X-RateLimit-Remaining', String(t.remaining));
    if (!t.ok) throw new AppError('rate_limited', undefined, { retryAfter: t.retryAfter, headers: { 'Retry-After': String(t.retryAfter) } });
  };
}
