/**
 * Per-IP token buckets of the marketplace's paid-path routes (DESIGN §5 "Errors": 60/min on
 * quote, purchase and execute). In-process: each marketplace process enforces its own share.
 */
import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import { AppError } from '../errors.ts';
import { KeyedBuckets } from '../http/keyed-buckets.ts';

export function ipRateLimit(perMinute: number, clock: () => number = Date.now) {
  const buckets = new KeyedBuckets(perMinute, clock);
  const limit = String(perMinute);
  // A callback hook, not an async one: it runs before every paid call's handler, and an async
  // hook costs a promise and a microtask turn each time for a synchronous check.
  return (req: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction): void => {
    const t = buckets.take(req.ip);
    void reply.header('X-RateLimit-Limit', limit);
    void reply.header('X-RateLimit-Remaining', String(t.remaining));
    if (!t.ok) done(new AppError('rate_limited', undefined, { retryAfter: t.retryAfter, headers: { 'Retry-After': String(t.retryAfter) } }));
    else done();
  };
}
