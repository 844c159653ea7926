/**
 * Idempotency-Key handling at the edge (spec Endpoints, Create; ADR 0005): the header rules
 * and the request fingerprint. Claims and records live in `anm_gate_lease` / IdempotencyRecords.
 */
import { hash } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { AppError } from '../errors.ts';
import { LIMITS } from '../schemas/payment-intent.ts';
import { codePoints } from '../../machines/kit/text.ts';

// `ignoreBOM`: a key is its bytes; one starting with a byte order mark is not the key without it.
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * The header value, or the 400 it deserves. Node hands header bytes over as latin-1; they are
 * read back as UTF-8 so the limit counts characters (code points), as the spec's "max 255
 * chars" means, and a key that is not UTF-8 is refused rather than guessed at.
 */
export function idempotencyKey(req: FastifyRequest): string;
export function idempotencyKey(req: FastifyRequest, opts: { optional: true }): string | null;
export function idempotencyKey(req: FastifyRequest, opts?: { optional: true }): string | null {
  const v = req.headers['idempotency-key'];
  if (v === undefined || v === '') {
    if (opts?.optional) return null;
    throw new AppError('idempotency_key_required');
  }
  const bad = () => new AppError('bad_request', `Idempotency-Key must be one UTF-8 string of at most ${LIMITS.idempotencyKey} characters.`);
  if (typeof v !== 'string') throw bad();
  // ASCII (the common case) is the same in both readings.
  if (!/[\u0080-\uffff]/.test(v)) {
    if (v.length > LIMITS.idempotencyKey) throw bad();
    return v;
  }
  let text: string;
  try {
    text = utf8.decode(Buffer.from(v, 'latin1'));
  } catch {
    throw bad();
  }
  if (codePoints(text) > LIMITS.idempotencyKey) throw bad();
  return text;
}

/** Text JSON.stringify writes as is between quotes: printable ASCII but `"` and `\\`. */
const PLAIN = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

/** A string's JSON: quoted directly when nothing in it needs an escape, else JSON.stringify's. */
const quoted = (s: string): string => (PLAIN.test(s) ? `"${s}"` : JSON.stringify(s));

/**
 * JSON with object keys sorted, so the same body with other whitespace or key order matches.
 * Written in one pass into one string (a purchase's body has some forty members), strings
 * without escapes quoted directly rather than through JSON.stringify (nearly every key and
 * value of a body: ADR 0095): the same text as mapping and joining each level, which stored
 * request hashes depend on (gateway/http/idempotency.test.ts holds the two equal).
 */
export function canonicalJson(v: unknown): string {
  if (typeof v === 'string') return quoted(v);
  if (typeof v !== 'object' || v === null) return JSON.stringify(v) ?? 'null';
  if (Array.isArray(v)) {
    let s = '[';
    for (let i = 0; i < v.length; i++) {
      if (i > 0) s += ',';
      // A hole stays empty, as `map` and `join` leave it (JSON.parse never makes one).
      if (i in v) s += canonicalJson(v[i]);
    }
    return `${s}]`;
  }
  const o = v as Record<string, unknown>;
  const keys = Object.keys(o).sort();
  let s = '{';
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i]!;
    if (i > 0) s += ',';
    s += quoted(k);
    s += ':';
    s += canonicalJson(o[k]);
  }
  return `${s}}`;
}

/** What "the same request" means for a key: the route and the canonical body (one-shot SHA-256 of both). */
export function requestHash(route: string, body: unknown): string {
  return hash('sha256', `${route}\n${canonicalJson(body)}`, 'hex');
}
