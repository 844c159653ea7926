/**
 * Per-IP token buckets of the marketplace's paid-path routes (DESIGN §5 "Errors": 60/min on
 * quote, purchase and execute). In-process: each marketplace process enforces its own share.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../errors.ts';

interface Bucket {
  tokens: number;
  at: number;
}

const MAX_TRACKED = 100_000;

export function ipRateLimit(perMinute: number, clock: () => number = Date.now) {
  const buckets = new Map<string, Bucket>();
  const rate = perMinute / 60_000;
  return async (req: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const now = clock();
    const b = buckets.get(req.ip) ?? { tokens: perMinute, at: now };
    b.tokens = Math.min(perMinute, b.tokens + (now - b.at) * rate);
    b.at = now;
    // Forget idle callers first, so a scan of many addresses cannot grow the map without end.
    if (!buckets.has(req.ip) && buckets.size >= MAX_TRACKED) buckets.delete(buckets.keys().next().value!);
    buckets.delete(req.ip);
    buckets.set(req.ip, b);
    void reply.header('X-RateLimit-Limit', String(perMinute));
    if (b.tokens < 1) {
      const secs = Math.max(1, Math.ceil((1 - b.tokens) / rate / 1000));
      void reply.header('X-RateLimit-Remaining', '0');
      throw new AppError('rate_limited', undefined, { retryAfter: secs, headers: { 'Retry-After': String(secs) } });
    }
    b.tokens -= 1;
    void reply.header('X-RateLimit-Remaining', String(Math.floor(b.tokens)));
  };
}
