/**
 * Idempotency-Key handling at the edge (spec Endpoints, Create; ADR 0005): the header rules
 * and the request fingerprint. Claims and records live in `anm_gate` / IdempotencyRecords.
 */
import { createHash } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { AppError } from '../errors.ts';
import { isPlainObject } from './body.ts';
import { LIMITS } from '../schemas/payment-intent.ts';

/** The header value, or the 400 it deserves. */
export function idempotencyKey(req: FastifyRequest): string {
  const v = req.headers['idempotency-key'];
  if (v === undefined || v === '') throw new AppError('idempotency_key_required');
  if (typeof v !== 'string' || v.length > LIMITS.idempotencyKey) {
    throw new AppError('bad_request', `Idempotency-Key must be one string of at most ${LIMITS.idempotencyKey} characters.`);
  }
  return v;
}

/** JSON with object keys sorted, so the same body with other whitespace or key order matches. */
export function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  if (isPlainObject(v)) {
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson(v[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}

/** What "the same request" means for a key: the route and the canonical body. */
export function requestHash(route: string, body: unknown): string {
  return createHash('sha256').update(route).update('\n').update(canonicalJson(body)).digest('hex');
}
