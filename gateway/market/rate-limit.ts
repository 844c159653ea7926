/**
 * Per-IP token buckets of the marketplace's paid-path routes (DESIGN §5 "Errors": 60/min on
 * quote, purchase and execute, "as for the merchant API"). In-process: each marketplace process
 * enforces its own share. The headers are the merchant API's (spec "Limits": X-RateLimit-Limit,
 * -Remaining, -Reset; Retry-After on a refusal), from the same helper. Routes take it as an
 * `onRequest` hook: it judges before the body is read, so the limit is the first refusal
 * (docs/errors.md), ahead of `invalid_json`, `413` and anything the body says (ADR 0084).
 */
import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import { KeyedBuckets } from '../http/keyed-buckets.ts';
import { rateHeaders, rateLimited } from '../http/rate-headers.ts';

export function ipRateLimit(perMinute: number, clock: () => number = Date.now) {
  const buckets = new KeyedBuckets(perMinute, clock);
  // A callback hook, not an async one: it runs on every paid call, and an async hook costs a
  // promise and a microtask turn each time for a synchronous check.
  return (req: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction): void => {
    const ip = buckets.take(req.ip);
    rateHeaders(reply, { ip });
    if (!ip.ok) done(rateLimited(ip));
    else done();
  };
}
