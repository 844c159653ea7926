/**
 * Allowed widget origins as patterns. An entry is an exact origin (`https://shop.example`)
 * or, for a loopback host only, an origin with a `*` port (`http://127.0.0.1:*`), so a page
 * served on any local port may embed a TEST-mode checkout. The `*` port form is the CSP
 * `frame-ancestors` source syntax, so the header takes it as is; the embedded page's
 * `postMessage` check matches a concrete origin against it with `originMatches`.
 *
 * Pure (no URL parsing of the pattern beyond what is spelled here) so the server and the
 * browser bundle share one definition of "matches".
 */

/** Hosts a `*` port may be given for. IPv6 literals are left out: CSP host-source has no syntax for them. */
export const LOOPBACK_HOSTS: readonly string[] = ['127.0.0.1', 'localhost'];

const PORT_WILDCARD = /^(https?):\/\/([^/?#@:]+):\*\/?$/i;

export interface PortWildcard {
  scheme: 'http' | 'https';
  host: string;
}

/**
 * `http://localhost:*` → `{scheme, host}` in lower case; null when the value is not written
 * as a port wildcard at all. A port wildcard on a host that is not loopback is also null:
 * callers treat that as an invalid origin.
 */
export function loopbackWildcard(value: string): PortWildcard | null {
  const m = PORT_WILDCARD.exec(value.trim());
  if (!m) return null;
  const host = m[2]!.toLowerCase();
  if (!LOOPBACK_HOSTS.includes(host)) return null;
  return { scheme: m[1]!.toLowerCase() as PortWildcard['scheme'], host };
}

/** True when the value carries a `*` anywhere: only the loopback port form may. */
export const hasWildcard = (value: string): boolean => value.includes('*');

/**
 * Whether a concrete origin (`MessageEvent.origin`, `scheme://host[:port]`) is allowed by a
 * pattern. `wildcards: false` (a live-mode check) honours exact entries only.
 */
export function originMatches(pattern: string, origin: string, opts: { wildcards: boolean }): boolean {
  if (pattern === origin) return !hasWildcard(pattern);
  if (!opts.wildcards) return false;
  const w = loopbackWildcard(pattern);
  if (!w) return false;
  const m = /^(https?):\/\/([^/?#@:]+)(?::(\d{1,5}))?$/.exec(origin);
  if (!m) return false;
  return m[1] === w.scheme && m[2] === w.host;
}

/** `originMatches` over a list. */
export const anyOriginMatches = (patterns: readonly string[], origin: string, opts: { wildcards: boolean }): boolean =>
  patterns.some((p) => originMatches(p, origin, opts));
