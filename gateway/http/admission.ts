/**
 * Authentication and rate limits of the merchant API (spec "Authentication", "Limits"). The
 * decision is made by `Gate.pass` (at most one round trip, token leases per process, ADR
 * 0004); this file reads the request, orders the refusals (IP bucket, key, account, key
 * bucket) and writes the X-RateLimit-* headers.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Bucket, GateKey, GateResult } from '../../runtime/merchant/gate.ts';
import { ApiKeyHashes, parseApiKey } from '../../runtime/merchant/secrets.ts';
import { AppError } from '../errors.ts';

const KEY_IN_COOKIE = /(?:ask|apk)_(?:live|test)_/;
const BEARER = /^Bearer +(\S+) *$/i;

/**
 * Keyed hash of the secret key in `Authorization: Bearer`, or null for a missing, malformed
 * or publishable key, or for any request carrying a key in a cookie (spec Authentication 3):
 * all of these end in the same opaque 401.
 */
export function offeredKeyHash(req: FastifyRequest, pepper: Buffer): string | null {
  const cookie = req.headers.cookie;
  if (typeof cookie === 'string' && KEY_IN_COOKIE.test(cookie)) return null;
  const m = BEARER.exec(req.headers.authorization ?? '');
  const key = m?.[1];
  if (!key || parseApiKey(key)?.kind !== 'secret') return null;
  let hashes = hashesByPepper.get(pepper);
  if (!hashes) hashesByPepper.set(pepper, (hashes = new ApiKeyHashes(pepper)));
  return hashes.hash(key);
}

const hashesByPepper = new WeakMap<Buffer, ApiKeyHashes>();

function perSec(b: Bucket): number {
  return b.limits.perMinute / 60;
}

function retryAfter(b: Bucket): number {
  return Math.max(1, Math.ceil((1 - b.tokens) / perSec(b)));
}

/**
 * X-RateLimit-* of the tighter dimension (fewest whole tokens left; on a tie the smaller
 * capacity), or of the dimension that refused. Retry-After only on a refusal.
 */
export function rateHeaders(reply: FastifyReply, g: GateResult): void {
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

function rateLimited(b: Bucket): AppError {
  const secs = retryAfter(b);
  return new AppError('rate_limited', undefined, { retryAfter: secs, headers: { 'Retry-After': String(secs) } });
}

/** Public routes: only the IP bucket. */
export function admitIp(reply: FastifyReply, g: GateResult): void {
  rateHeaders(reply, g);
  if (!g.ip.ok) throw rateLimited(g.ip);
}

/** Merchant API routes: IP bucket, then a valid secret key of an active account, then its bucket. */
export function admitKey(reply: FastifyReply, g: GateResult): GateKey {
  admitIp(reply, g);
  if (!g.key) throw new AppError('unauthorized');
  if (g.key.merchantStatus !== 'active') throw new AppError('forbidden', 'This account is suspended.');
  if (g.keyBucket && !g.keyBucket.ok) throw rateLimited(g.keyBucket);
  return g.key;
}

export function inFlight(): AppError {
  return new AppError('rate_limited', 'A request with this Idempotency-Key is still being processed.', { retryAfter: 1, headers: { 'Retry-After': '1' } });
}
