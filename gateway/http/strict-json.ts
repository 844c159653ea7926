/**
 * Request bodies are read strictly (spec "Errors": invalid_json): the media type must be
 * `application/json` with no charset or `utf-8`, and the bytes one strict JSON document as
 * runtime/strict-json.ts defines it (fatal UTF-8, no key named twice at any depth).
 */
import { parseStrictJsonBytes } from '../../runtime/strict-json.ts';

export { hasDuplicateKey } from '../../runtime/strict-json.ts';

/** `application/json`, optionally `; charset=utf-8` (quoted or not, any case); other parameters are ignored. */
export function isJsonMediaType(header: string | undefined): boolean {
  if (header === undefined) return false;
  const [type, ...params] = header.split(';');
  if (type!.trim().toLowerCase() !== 'application/json') return false;
  for (const p of params) {
    const eq = p.indexOf('=');
    if (eq < 0) continue;
    if (p.slice(0, eq).trim().toLowerCase() !== 'charset') continue;
    const v = p.slice(eq + 1).trim().replace(/^"(.*)"$/, '$1').toLowerCase();
    if (v !== 'utf-8' && v !== 'utf8') return false;
  }
  return true;
}

/** The value, or `{ ok: false }` when the bytes are not a strict JSON document of the right type. */
export function parseStrictJson(raw: Uint8Array, contentType: string | undefined): { ok: true; value: unknown } | { ok: false } {
  return isJsonMediaType(contentType) ? parseStrictJsonBytes(raw) : { ok: false };
}
