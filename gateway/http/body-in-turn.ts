/**
 * A body Fastify refuses before the handler (over the 256 KiB cap, a Content-Length it does
 * not match) is judged at the body's turn of docs/errors.md, not first: the per-IP limit, the
 * key, the account and the key's limit (and the Idempotency-Key header) answer before a 413.
 * Only refused bodies come here, so an admitted request still makes one gate round trip.
 */
import type { FastifyInstance } from 'fastify';
import type { Gate } from '../../runtime/merchant/gate.ts';
import { ensureError } from '../errors.ts';
import { admit, type Step } from './admission.ts';
import { sendError } from './error-reply.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The steps the route admits with, for a body Fastify refused before its handler. */
    admission?: readonly Step[];
  }
}

/** FST_ERR_CTP_* are the body parser's refusals: the handler never ran for them. */
function parserRefusal(err: unknown): boolean {
  return typeof err === 'object' && err !== null && 'code' in err && typeof err.code === 'string' && err.code.startsWith('FST_ERR_CTP_');
}

/** The error handler of a context whose routes name their `config.admission`. */
export function judgeBodyInTurn(app: FastifyInstance, gate: Pick<Gate, 'pass'>): void {
  app.setErrorHandler((err, req, reply) => {
    const steps = req.routeOptions.config.admission;
    if (!steps || !parserRefusal(err)) return sendError(req, reply, err);
    // The body step reads the refusal from here (jsonBody) and holds it until its turn; a
    // route whose steps read no body is admitted and gets the refusal after them.
    req.body = ensureError(err);
    return admit(gate, req, reply, steps).then((a) => sendError(req, reply, a.admitted ? err : (a.error ?? err)));
  });
}
