/**
 * The marketplace's own base URL in its documents (`/.well-known/x402-marketplace`, fragments'
 * `how_to_pay`, discovery extensions), ADR 0081: MARKETPLACE_PUBLIC_URL when configured; else
 * the Host the caller sent, when it is a plain host[:port]; else the address the request
 * arrived at. A client's Host header is never copied into a document unchecked.
 */
import type { FastifyRequest } from 'fastify';
import type { MarketDeps } from './deps.ts';

/** Letters, digits, dots, hyphens, underscores, and the colons and brackets of a port or an IPv6 literal. */
const HOST_CHARS = /^[A-Za-z0-9._\-:[\]]{1,261}$/;

/**
 * `host` as URL parsing normalises it (lower case, the scheme's default port dropped), or null
 * unless it is exactly a host and an optional port.
 */
export function validHost(host: string | undefined, protocol: 'http' | 'https'): string | null {
  const origin = `${protocol}://${host}`;
  if (!host || !HOST_CHARS.test(host) || !URL.canParse(origin)) return null;
  const u = new URL(origin);
  const given = host.toLowerCase();
  // Anything URL parsing moved out of the host (a path, a user name) or rewrote is not a plain host.
  return given === u.host || given === `${u.hostname}:${protocol === 'https' ? 443 : 80}` ? u.host : null;
}

/** The local end of the connection: where this process listens, as the caller reached it. */
function localHost(req: FastifyRequest): string {
  const { localAddress, localPort } = req.socket;
  if (!localAddress || !localPort) return 'localhost';
  const addr = localAddress.replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/, '');
  return `${addr.includes(':') ? `[${addr}]` : addr}:${localPort}`;
}

export function baseUrl(deps: MarketDeps, req: FastifyRequest): string {
  if (deps.publicBaseUrl) return deps.publicBaseUrl.replace(/\/$/, '');
  return `${req.protocol}://${validHost(req.host, req.protocol) ?? localHost(req)}`;
}
