/**
 * Bodies arrive as raw bytes: Fastify enforces the 256 KiB limit from Content-Length before
 * reading and again while streaming (413), and JSON is parsed by the handler after the key
 * has been checked, so an unauthenticated caller learns nothing from a body error; a 413 waits
 * for the same checks (body-in-turn.ts).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError } from '../errors.ts';
import { parseStrictJson } from './strict-json.ts';

export { boundedJsonSize, MAX_JSON_DEPTH, storableString } from '../../runtime/storable-json.ts';

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
  if (!(raw instanceof Buffer)) {
    // A body Fastify refused, judged at this step's turn (body-in-turn.ts).
    if (raw instanceof AppError) throw raw;
    return undefined;
  }
  if (raw.length === 0) return undefined;
  const parsed = parseStrictJson(raw, req.headers['content-type']);
  if (!parsed.ok) throw new AppError('invalid_json');
  return parsed.value;
}

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Any C0 control character, DEL or whitespace (what an URL written by hand must not carry). */
export function hasControlOrSpace(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c <= 0x20 || c === 0x7f || /\s/.test(s[i]!)) return true;
  }
  return false;
}
