/**
 * `/api/v1/refunds` (spec rule 8): create, read and submit, each admitted with the secret key;
 * the commands themselves are in gateway/refunds/commands.ts, shared with the dashboard.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { RefundContext } from '../../machines/refund/context.ts';
import { refundResource, type RefundStatus } from '../../machines/refund/view.ts';
import type { GateKey } from '../../runtime/merchant/gate.ts';
import type { GatewayDeps } from '../deps.ts';
import { admit, admittedKey, body, idempotencyClaim, idempotencyHeader, ipLimit, refuse, secretKey } from '../http/admission.ts';
import { isPlainObject, jsonBody } from '../http/body.ts';
import { sendKeyedCreate } from '../http/keyed-create.ts';
import { sendJson } from '../http/reply.ts';
import { refundCommands } from '../refunds/commands.ts';
import { validateRefund, type RefundInput } from './refund-input.ts';

const CREATE_ROUTE = 'POST /api/v1/refunds';

/** The body as the key compares it: amount and amount_nanm both as nANM, an absent field as null. */
function normalised(input: RefundInput): unknown {
  return { payment_intent: input.paymentIntent, amount: input.amount === null ? null : input.amount.toString(), reason: input.reason };
}

export default async function refunds(app: FastifyInstance, opts: { deps: GatewayDeps }): Promise<void> {
  const d = opts.deps;
  const commands = refundCommands(d);

  const keyed = [ipLimit, ...secretKey(d.pepper)];
  // The key is optional on refunds; with one, a different normalised body is 409 and a finished
  // refund replays its first response (spec "Errors": idempotency_key_reused), as on intents.
  const createSteps = [...keyed, idempotencyHeader(false), body((req) => validateRefund(jsonBody(req))), idempotencyClaim<RefundInput>(CREATE_ROUTE, normalised)];

  const admitKey = (req: FastifyRequest, reply: FastifyReply): Promise<GateKey> => admittedKey(d.gate, req, reply, keyed);

  app.post('/api/v1/refunds', { config: { admission: createSteps } }, async (req, reply) => {
    const a = await admit<RefundInput>(d.gate, req, reply, createSteps);
    if (!a.admitted) return refuse(reply, a);
    return sendKeyedCreate(d.idempotency, reply, a, commands.create);
  });

  app.get<{ Params: { id: string } }>('/api/v1/refunds/:id', async (req, reply) => {
    const key = await admitKey(req, reply);
    const r = await commands.own(key, req.params.id);
    sendJson(reply, 200, refundResource(r.snapshot.context as RefundContext, r.state as RefundStatus));
    return reply;
  });

  app.post<{ Params: { id: string } }>('/api/v1/refunds/:id/submit', { config: { admission: keyed } }, async (req, reply) => {
    const key = await admitKey(req, reply);
    const b = jsonBody(req);
    sendJson(reply, 200, await commands.submit(key, req.params.id, isPlainObject(b) ? b.signed_transaction : undefined));
    return reply;
  });
}
