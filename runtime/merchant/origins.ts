/**
 * Web origins a merchant allows to frame its hosted checkout. Stored normalised
 * (`scheme://host[:port]`, no path) because they are written into a
 * `Content-Security-Policy: frame-ancestors` header and compared with `postMessage` origins.
 */
import { TerminalError } from '../errors.ts';

export class InvalidOrigin extends TerminalError {
  constructor(value: string) {
    super('invalid_origin', `not an http(s) origin: ${JSON.stringify(value)}`);
  }
}

/** `https://shop.example/cart?x` → `https://shop.example`; throws on anything else. */
export function normalizeOrigin(value: string): string {
  let u: URL;
  try {
    u = new URL(value);
  } catch {
    throw new InvalidOrigin(value);
  }
  if ((u.protocol !== 'https:' && u.protocol !== 'http:') || u.username || u.password || !u.hostname) throw new InvalidOrigin(value);
  return u.origin;
}

/** Normalised origins, dropping whatever is not one (an old row must not break the header). */
export function safeOrigins(values: readonly string[]): string[] {
  const out = new Set<string>();
  for (const v of values) {
    try {
      out.add(normalizeOrigin(v));
    } catch {
      /* skipped: never written into a header */
    }
  }
  return [...out];
}
