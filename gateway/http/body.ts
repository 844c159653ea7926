/**
 * Bodies arrive as raw bytes: Fastify enforces the 256 KiB limit from Content-Length before
 * reading and again while streaming (413), and JSON is parsed by the handler after the key
 * has been checked, so an unauthenticated caller learns nothing from a body error.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError } from '../errors.ts';
import { parseStrictJson } from './strict-json.ts';

export const BODY_LIMIT = 256 * 1024;

export function rawBodyParser(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
}

/**
 * For apps whose routes read the body before any credential (the marketplace, the operator's
 * webhook API behind its onRequest check): the strict JSON value, or 400 `invalid_json`.
 */
export function strictJsonParser(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (req, raw: Buffer, done) => {
    if (raw.length === 0) return done(null, undefined);
    const parsed = parseStrictJson(raw, req.headers['content-type']);
    if (parsed.ok) done(null, parsed.value);
    else done(new AppError('invalid_json'), undefined);
  });
}

/**
 * The body as JSON; undefined when there is none. Anything but a strict JSON document sent as
 * `application/json` in UTF-8 without duplicate keys is 400 `invalid_json` (strict-json.ts).
 */
export function jsonBody(req: FastifyRequest): unknown {
  const raw = req.body;
  if (!(raw instanceof Buffer) || raw.length === 0) return undefined;
  const parsed = parseStrictJson(raw, req.headers['content-type']);
  if (!parsed.ok) throw new AppError('invalid_json');
  return parsed.value;
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

/** How deep `metadata` may nest (an object holding only scalars is depth 1). */
export const MAX_JSON_DEPTH = 32;

/**
 * The serialised UTF-8 size of a parsed JSON value, walked without recursion and given up on
 * (null) as soon as it passes `maxBytes` or `maxDepth`, or meets a string (keys too) that
 * PostgreSQL cannot store or a number JSON cannot carry (1e400 parses to Infinity). No
 * recursion, so a value 100,000 deep is refused at depth `maxDepth + 1`, not by a stack overflow.
 */
export function boundedJsonSize(v: unknown, maxBytes: number, maxDepth: number = MAX_JSON_DEPTH): number | null {
  let bytes = 0;
  // Each entry: a value still to visit at its depth (containers count their own brackets).
  const todo: Array<{ v: unknown; depth: number }> = [{ v, depth: 0 }];
  while (todo.length > 0) {
    const { v: x, depth } = todo.pop()!;
    if (typeof x === 'string') {
      if (!storableString(x)) return null;
      bytes += Buffer.byteLength(JSON.stringify(x), 'utf8');
    } else if (typeof x === 'number') {
      if (!Number.isFinite(x)) return null;
      bytes += JSON.stringify(x).length;
    } else if (x === null || typeof x === 'boolean') {
      bytes += x === null ? 4 : x ? 4 : 5;
    } else if (typeof x === 'object') {
      if (depth + 1 > maxDepth) return null;
      const entries = Array.isArray(x) ? x.map((e) => [null, e] as const) : Object.entries(x);
      // Brackets plus one comma between entries.
      bytes += 2 + Math.max(0, entries.length - 1);
      for (const [k, e] of entries) {
        if (k !== null) {
          if (!storableString(k)) return null;
          bytes += Buffer.byteLength(JSON.stringify(k), 'utf8') + 1;
        }
        todo.push({ v: e, depth: depth + 1 });
      }
    } else {
      return null;
    }
    if (bytes > maxBytes) return null;
  }
  return bytes;
}
