import { timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';

/** True when the request carries `Authorization: Bearer <operator token>`. Constant-time compare. */
export function isOperator(req: FastifyRequest, token: string): boolean {
  const h = req.headers.authorization;
  if (typeof h !== 'string' || !h.startsWith('Bearer ')) return false;
  const given = Buffer.from(h.slice(7));
  const want = Buffer.from(token);
  return given.length === want.length && timingSafeEqual(given, want);
}
