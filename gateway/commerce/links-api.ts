/**
 * `/api/v1/payment-links` (DESIGN §7, Stripe's shape): create, list, retrieve, deactivate, each
 * admitted with the secret key as the intents' routes are; Idempotency-Key optional on create.
 * The link is an actor; these routes send it events and read its snapshot.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { GateKey } from '../../runtime/merchant/gate.ts';
import type { GatewayDeps } from '../deps.ts';
import { AppError } from '../errors.ts';
import { admit, admittedKey, body, idempotencyClaim, idempotencyHeader, ipLimit, refuse, secretKey } from '../http/admission.ts';
import { jsonBody } from '../http/body.ts';
import { JSON_TYPE, sendJson } from '../http/reply.ts';
import { linkCommands } from './link-commands.ts';
import { validateLink, type LinkInput } from './link-input.ts';

const CREATE_ROUTE = 'POST /api/v1/payment-links';
const ListQuery = z.strictObject({ limit: z.coerce.number().int().min(1).max(100).optional(), starting_after: z.string().max(64).optional() });

export default async function paymentLinksApi(app: FastifyInstance, opts: { deps: GatewayDeps }): Promise<void> {
  const d = opts.deps;
  const commerce = d.commerce;
  if (!commerce) return;
  const commands = linkCommands(d);
  const keyed = [ipLimit, ...secretKey(d.pepper)];
  const createSteps = [...keyed, idempotencyHeader(false), body((req) => validateLink(jsonBody(req))), idempotencyClaim<LinkInput>(CREATE_ROUTE, (b) => b)];

  const admitKey = (req: FastifyRequest, reply: FastifyReply): Promise<GateKey> => admittedKey(d.gate, req, reply, keyed);

  app.post('/api/v1/payment-links', { config: { admission: createSteps } }, async (req, reply) => {
    const a = await admit<LinkInput>(d.gate, req, reply, createSteps);
    if (!a.admitted) return refuse(reply, a);
    const key = a.key!;
    const claim = a.claim;
    try {
      const handle = await commerce.links.handleOf(key.merchant);
      const text = JSON.stringify(await commands.create(key.merchant, key.mode, handle, a.body));
      if (claim) await d.idempotency.done(key.merchant, key.mode, claim.key, 201, { 'content-type': JSON_TYPE }, text);
      return reply.code(201).type(JSON_TYPE).send(text);
    } catch (err) {
      // A refusal leaves nothing behind: a retry with the key runs afresh.
      if (claim) await d.idempotency.release(key.merchant, key.mode, claim.key).catch(() => undefined);
      throw err;
    }
  });

  app.get('/api/v1/payment-links', async (req, reply) => {
    const key = await admitKey(req, reply);
    const q = ListQuery.safeParse(req.query ?? {});
    if (!q.success) throw new AppError('bad_request', 'Query parameters: limit is an integer 1-100 and starting_after a payment link id; nothing else is accepted.');
    const page = await commerce.links.list(key.merchant, key.mode, q.data.limit ?? 20, q.data.starting_after);
    if (!page) throw new AppError('bad_request', 'starting_after names no payment link of this merchant and mode.');
    sendJson(reply, 200, { object: 'list', has_more: page.hasMore, data: page.rows.map(commands.render) });
    return reply;
  });

  app.get<{ Params: { id: string } }>('/api/v1/payment-links/:id', async (req, reply) => {
    const key = await admitKey(req, reply);
    sendJson(reply, 200, commands.render(await commands.own(key.merchant, key.mode, req.params.id)));
    return reply;
  });

  app.post<{ Params: { id: string } }>('/api/v1/payment-links/:id/deactivate', { config: { admission: keyed } }, async (req, reply) => {
    const key = await admitKey(req, reply);
    sendJson(reply, 200, await commands.deactivate(key.merchant, key.mode, req.params.id));
    return reply;
  });
}
