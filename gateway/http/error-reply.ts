/**
 * Every error response of every app in the spec envelope, from one place: a route's throw, an
 * unknown path or verb, Fastify's own refusals before routing (a bad URL, an over-long id:
 * `frameworkErrors`), and HTTP the parser could not read (`clientErrorHandler`). Apps pass
 * `errorOptions()` to Fastify and call `sendError` from their handlers.
 */
import type { Socket } from 'node:net';
import type { FastifyReply, FastifyRequest, FastifyServerOptions } from 'fastify';
import { randomId } from '../../runtime/merchant/secrets.ts';
import { MarketRefusal } from '../../runtime/market/errors.ts';
import { AppError, envelope, ensureError } from '../errors.ts';
import { JSON_TYPE } from './reply.ts';

/** Whatever was thrown, as the envelope with its status, headers and the request id. */
export function sendError(req: FastifyRequest, reply: FastifyReply, err: unknown): FastifyReply {
  const e = ensureError(err);
  // A refusal the service chose (a seller it cannot reach, a ledger that is down) is the
  // outside world's state, logged as a warning without a stack; anything else is our fault.
  if (e.status >= 500 && e.code !== 'internal_error' && (err instanceof AppError || err instanceof MarketRefusal)) req.log.warn({ code: e.code, detail: e.message }, 'request refused upstream');
  else if (e.status >= 500) req.log.error({ err }, 'request failed');
  if (e.opts.headers) void reply.headers(e.opts.headers);
  // Set here too: framework errors reach us before the onRequest hooks that set it.
  void reply.header('request-id', req.id);
  return reply.code(e.status).type(JSON_TYPE).send(JSON.stringify(envelope(e, req.id)));
}

export function newRequestId(): string {
  return randomId('req_', 10);
}

/** A request line or headers Node could not parse: 400 `bad_request`, still in the envelope. */
function clientError(err: NodeJS.ErrnoException, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  if (socket.writable) {
    const id = newRequestId();
    const body = JSON.stringify(envelope(new AppError('bad_request', 'The HTTP request could not be parsed.'), id));
    socket.write(`HTTP/1.1 400 Bad Request\r\nContent-Length: ${Buffer.byteLength(body)}\r\nContent-Type: ${JSON_TYPE}\r\nrequest-id: ${id}\r\nConnection: close\r\n\r\n${body}`);
  }
  socket.destroy(err);
}

/** The Fastify options every app takes: our request ids, and framework errors in the envelope. */
export function errorOptions(): Pick<FastifyServerOptions, 'genReqId' | 'requestIdHeader' | 'frameworkErrors' | 'clientErrorHandler'> {
  return {
    // Request ids are ours: a client-supplied one would let callers forge log correlation.
    genReqId: newRequestId,
    requestIdHeader: false,
    frameworkErrors: (err, req, reply) => void sendError(req, reply, err),
    clientErrorHandler: clientError,
  };
}
