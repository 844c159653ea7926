/**
 * API keys of the mode the session is in (spec Authentication 5 and 10): list with last use,
 * create (the key is in this one response and never again), revoke.
 */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { AppError } from '../errors.ts';
import { admitDash, parseBody, type Dash } from './context.ts';

const Create = z.strictObject({ kind: z.enum(['secret', 'publishable']).default('secret') });

export function keyRoutes(app: FastifyInstance, x: Dash): void {
  app.get('/dashboard/api/keys', async (req, reply) => {
    const who = await admitDash(x, req, reply);
    return { object: 'list', mode: who.mode, data: await x.svc.reads.keys(who.merchant, who.mode) };
  });

  app.post('/dashboard/api/keys', async (req, reply) => {
    const who = await admitDash(x, req, reply);
    const { kind } = parseBody(Create, req.body);
    const k = await x.d.merchants.createKey(who.merchant, who.mode, kind);
    return reply.code(201).send({ id: k.id, kind: k.kind, mode: k.mode, prefix: k.prefix, key: k.key });
  });

  app.post<{ Params: { id: string } }>('/dashboard/api/keys/:id/revoke', async (req, reply) => {
    const who = await admitDash(x, req, reply);
    const r = await x.d.merchants.revokeOwnKey(who.merchant, req.params.id);
    if (!r) throw new AppError('not_found');
    return r;
  });
}
