/**
 * What every HTTP app of the service shares at its edge: our own request ids (in the
 * `request-id` header), errors in the spec envelope, and 404/405 decided from the routes the
 * app registered. `buildApp` and `buildMarketApp` both install it before their routes.
 */
import type { FastifyInstance } from 'fastify';
import { AppError } from '../errors.ts';
import { sendError } from './error-reply.ts';
import { KnownRoutes } from './known-routes.ts';

export function installEdge(app: FastifyInstance): void {
  const known = new KnownRoutes();
  app.addHook('onRoute', (r) => known.add(r.method, r.url));
  // A callback hook, not an async one: this runs on every request, and an async hook costs a
  // promise and a microtask turn each time for a synchronous header.
  app.addHook('onRequest', (req, reply, done) => {
    void reply.header('request-id', req.id);
    // No id, handle, slug or query we accept contains NUL, and PostgreSQL refuses it in text:
    // refuse the URL here rather than let a lookup fail as a 500.
    if (req.url.includes('%00')) {
      sendError(req, reply, new AppError('bad_request', 'The URL contains an encoded NUL character.'));
      return;
    }
    done();
  });

  app.setErrorHandler((err, req, reply) => sendError(req, reply, err));

  app.setNotFoundHandler((req, reply) => {
    const path = req.url.split('?')[0] ?? '';
    const allowed = known.methodsFor(path);
    if (allowed.length > 0) void reply.header('Allow', allowed.join(', '));
    return sendError(req, reply, allowed.length > 0 ? new AppError('method_not_allowed', `Allowed: ${allowed.join(', ')}.`) : new AppError('not_found'));
  });
}
