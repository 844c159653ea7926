/**
 * What every HTTP app of the service shares at its edge: our own request ids (in the
 * `request-id` header), errors in the spec envelope, and 404/405 decided from the routes the
 * app registered. `buildApp` and `buildMarketApp` both install it before their routes.
 */
import type { FastifyInstance } from 'fastify';
import { AppError, envelope, ensureError } from '../errors.ts';
import { KnownRoutes } from './known-routes.ts';
import { JSON_TYPE } from './reply.ts';

export function installEdge(app: FastifyInstance): void {
  const known = new KnownRoutes();
  app.addHook('onRoute', (r) => known.add(r.method, r.url));
  // A callback hook, not an async one: this runs on every request, and an async hook costs a
  // promise and a microtask turn each time for a synchronous header.
  app.addHook('onRequest', (req, reply, done) => {
    void reply.header('request-id', req.id);
    done();
  });

  app.setErrorHandler((err, req, reply) => {
    const e = ensureError(err);
    if (e.status >= 500) req.log.error({ err }, 'request failed');
    if (e.opts.headers) void reply.headers(e.opts.headers);
    void reply.code(e.status).type(JSON_TYPE).send(JSON.stringify(envelope(e, req.id)));
  });

  app.setNotFoundHandler((req, reply) => {
    const path = req.url.split('?')[0] ?? '';
    const allowed = known.methodsFor(path);
    const e = allowed.length > 0 ? new AppError('method_not_allowed', `Allowed: ${allowed.join(', ')}.`) : new AppError('not_found');
    if (allowed.length > 0) void reply.header('Allow', allowed.join(', '));
    void reply.code(e.status).type(JSON_TYPE).send(JSON.stringify(envelope(e, req.id)));
  });
}
