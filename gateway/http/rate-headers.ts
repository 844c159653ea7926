/** X-RateLimit-* and Retry-After (spec "Limits"), from the gate's buckets. */
import type { FastifyReply } from 'fastify';
import type { Bucket } from '../../runtime/merchant/gate.ts';
import { AppError } from '../errors.ts';

function perSec(b: Bucket): number {
  return b.limits.perMinute / 60;
}

/**
 * X-RateLimit-* of the tighter dimension (fewest whole tokens left; on a tie the smaller
 * capacity), or of the dimension that refused. Retry-After only on a refusal. The merchant
 * gate's result, or the marketplace's one IP bucket (gateway/market/rate-limit.ts).
 */
export function rateHeaders(reply: FastifyReply, g: { ip: Bucket; keyBucket?: Bucket | null }): void {
  const dims = g.keyBucket ? [g.ip, g.keyBucket] : [g.ip];
  const refused = dims.find((d) => !d.ok);
  const dim =
    refused ??
    dims.reduce((a, b) => {
      const fa = Math.floor(a.tokens);
      const fb = Math.floor(b.tokens);
      return fb < fa || (fb === fa && b.limits.capacity < a.limits.capacity) ? b : a;
    });
  const tokens = Math.max(0, dim.tokens);
  reply.header('X-RateLimit-Limit', String(dim.limits.capacity));
  reply.header('X-RateLimit-Remaining', String(Math.floor(tokens)));
  reply.header('X-RateLimit-Reset', String(Math.max(0, Math.ceil((dim.limits.capacity - tokens) / perSec(dim)))));
}

export function rateLimited(b: Bucket): AppError {
  const secs = Math.max(1, Math.ceil((1 - b.tokens) / perSec(b)));
  return new AppError('rate_limited', undefined, { retryAfter: secs, headers: { 'Retry-After': String(secs) } });
}
