/**
 * The demo seller's origin, the one loopback origin routed execution and the scanner reach
 * without the development switch (ADR 0037). Apart from the seller's app so that a process
 * naming the origin (a primary whose market workers serve the seller) loads no x402 package.
 */

/** The address a listing names: a wildcard listen address is reached on loopback. */
export function reachableHost(host: string): string {
  if (host === '0.0.0.0' || host === '') return '127.0.0.1';
  if (host === '::') return '[::1]';
  return host.includes(':') ? `[${host}]` : host;
}

/** `http://<host>:<port>` of a demo seller listening on `host:port`. */
export function demoSellerOrigin(host: string, port: number): string {
  return `http://${reachableHost(host)}:${port}`;
}
