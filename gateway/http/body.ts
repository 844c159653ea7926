/**
 * Bodies arrive as raw bytes: Fastify enforces the 256 KiB limit from Content-Length before
 * reading and again while streaming (413), and JSON is parsed by the handler after the key
 * has been checked, so an unauthenticated caller learns nothing from a body error.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError } from '../errors.ts';

export const BODY_LIMIT = 256 * 1024;

export function rawBodyParser(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
}

/** The body as JSON; undefined when there is none. Bad JSON is 400 `invalid_json`. */
export function jsonBody(req: FastifyRequest): unknown {
  const raw = req.body;
  if (!(raw instanceof Buffer) || raw.length === 0) return undefined;
  try {
    return JSON.parse(raw.toString('utf8')) as unknown;
  } catch {
    throw new AppError('invalid_json');
  }
}

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * PostgreSQL jsonb and text cannot hold NUL or unpaired surrogates; such a string is refused
 * at the edge rather than failing the transaction.
 */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

export function storableString(s: string): boolean {
  return !s.includes('\u0000') && !LONE_SURROGATE.test(s);
}

/** Any C0 control character, DEL or whitespace (what an URL written by hand must not carry). */
export function hasControlOrSpace(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c <= 0x20 || c === 0x7f || /\s/.test(s[i]!)) return true;
  }
  return false;
}

/** Every string (keys too) in a parsed JSON value is storable. */
export function storableJson(v: unknown): boolean {
  if (typeof v === 'string') return storableString(v);
  if (Array.isArray(v)) return v.every(storableJson);
  if (isPlainObject(v)) return Object.entries(v).every(([k, x]) => storableString(k) && storableJson(x));
  return true;
}
