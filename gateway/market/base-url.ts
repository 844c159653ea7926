import type { FastifyRequest } from 'fastify';
import type { MarketDeps } from './deps.ts';

/** The marketplace's own base URL as the caller reached it, unless configured. */
export function baseUrl(deps: MarketDeps, req: FastifyRequest): string {
  return (deps.publicBaseUrl ?? `${req.protocol}://${req.host}`).replace(/\/$/, '');
}
