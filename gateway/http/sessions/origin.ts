/**
 * The `Origin` half of the CSRF defence (DESIGN §7: the token "double checked with Origin").
 * A browser sends `Origin` on every cross-origin request and on same-origin POSTs; a write
 * without one, or from any other origin than the service's public one or the host the request
 * was addressed to, is refused.
 */
import type { FastifyRequest } from 'fastify';

function originOf(url: string): string | null {
  try {
    return new URL(url).origin;
  } catch {
    return null;
  }
}

export function originAllowed(req: FastifyRequest, baseUrl: string): boolean {
  const origin = req.headers.origin;
  if (typeof origin !== 'string' || origin === 'null') return false;
  return origin === originOf(baseUrl) || origin === originOf(`${req.protocol}://${req.host}`);
}
