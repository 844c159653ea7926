/**
 * Web origins a merchant allows to frame its hosted checkout. Stored normalised
 * (`scheme://host[:port]`, no path) because they are written into a
 * `Content-Security-Policy: frame-ancestors` header and compared with `postMessage` origins.
 * A loopback host may be given with a `*` port (`http://localhost:*`, machines/kit/origin-pattern.ts);
 * such an entry is honoured for TEST-mode intents only.
 */
import { hasWildcard, loopbackWildcard } from '../../machines/kit/origin-pattern.ts';
import { TerminalError } from '../errors.ts';
import type { Mode } from './secrets.ts';

export class InvalidOrigin extends TerminalError {
  constructor(value: string) {
    super(
      'invalid_origin',
      hasWildcard(value)
        ? `a * is allowed only as the port of a loopback origin (http://127.0.0.1:* or http://localhost:*): ${JSON.stringify(value)}`
        : `not an http(s) origin: ${JSON.stringify(value)}`,
    );
  }
}

/** `https://shop.example/cart?x` → `https://shop.example`, `HTTP://LocalHost:*` → `http://localhost:*`; throws on anything else. */
export function normalizeOrigin(value: string): string {
  const w = loopbackWildcard(value);
  if (w) return `${w.scheme}://${w.host}:*`;
  // `https://*.example` parses as a URL whose host is `*.example`: refused before parsing.
  if (hasWildcard(value)) throw new InvalidOrigin(value);
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

/** The origins that may frame an intent of this mode: live never honours a loopback `*` port. */
export function originsForMode(values: readonly string[], mode: Mode): string[] {
  const safe = safeOrigins(values);
  return mode === 'live' ? safe.filter((o) => !hasWildcard(o)) : safe;
}
