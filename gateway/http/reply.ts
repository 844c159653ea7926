import type { FastifyReply } from 'fastify';

export const JSON_TYPE = 'application/json; charset=utf-8';

/** Serialises once, so the bytes sent are the bytes an idempotency record keeps. */
export function sendJson(reply: FastifyReply, status: number, value: unknown): string {
  const body = JSON.stringify(value);
  void reply.code(status).type(JSON_TYPE).send(body);
  return body;
}
