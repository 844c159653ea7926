/**
 * Operator API behind the operator token (`Authorization: Bearer <token>`): what the
 * `anmpay merchant|keys` commands call. Spec Authentication 10 leaves key management to the
 * dashboard; this is the operator's side of it.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { z } from 'zod';
import type { GatewayDeps } from '../deps.ts';
import { AppError, issuesMessage } from '../errors.ts';
import { jsonBody } from '../http/body.ts';
import { sendJson } from '../http/reply.ts';
import { isOperator } from '../operator-auth.ts';
import { CreateKeyRequest, CreateMerchantRequest, RevokeKeyRequest, SetAllowedOriginsRequest, SetPayoutRequest } from '../schemas/ops.ts';
import { NETWORKS, decodeAddress } from '../../machines/chain/index.ts';

function parse<T extends z.ZodType>(schema: T, req: FastifyRequest): z.infer<T> {
  const r = schema.safeParse(jsonBody(req) ?? {});
  if (!r.success) throw new AppError('invalid_body', issuesMessage(r.error.issues));
  return r.data;
}

export default async function ops(app: FastifyInstance, opts: { deps: GatewayDeps }): Promise<void> {
  const d = opts.deps;
  // Before the body is read: a wrong token is 401 whatever the body is, even one over the cap.
  app.addHook('onRequest', (req, _reply, done) => {
    done(isOperator(req, d.operatorToken) ? undefined : new AppError('unauthorized'));
  });

  app.post('/ops/api/merchants', async (req, reply) => {
    const body = parse(CreateMerchantRequest, req);
    // MerchantConflict is a TerminalError: ensureError maps it to 409 conflict.
    sendJson(reply, 201, await d.merchants.create(body));
    return reply;
  });

  app.post<{ Params: { id: string } }>('/ops/api/merchants/:id/keys', async (req, reply) => {
    const body = parse(CreateKeyRequest, req);
    sendJson(reply, 201, await d.merchants.createKey(req.params.id, body.mode, body.kind));
    return reply;
  });

  const revoke = async (idOrKey: string) => {
    const r = await d.merchants.revokeKey(idOrKey);
    if (!r) throw new AppError('not_found', 'No such key.');
    return r;
  };
  app.post<{ Params: { id: string } }>('/ops/api/keys/:id/revoke', async (req, reply) => {
    sendJson(reply, 200, await revoke(req.params.id));
    return reply;
  });
  // The key itself in the body, so a secret never sits in a URL or an access log.
  app.post('/ops/api/keys/revoke', async (req, reply) => {
    sendJson(reply, 200, await revoke(parse(RevokeKeyRequest, req).key));
    return reply;
  });

  // Origins allowed to frame the checkout (`/c/{id}?embed=1` → CSP frame-ancestors); replaces the list.
  app.post<{ Params: { id: string } }>('/ops/api/merchants/:id/allowed-origins', async (req, reply) => {
    const body = parse(SetAllowedOriginsRequest, req);
    // InvalidOrigin is a TerminalError: ensureError maps it to 400 invalid_body.
    const stored = await d.merchants.setAllowedOrigins(req.params.id, body.origins);
    if (!stored) throw new AppError('not_found', 'No such merchant.');
    sendJson(reply, 200, { id: req.params.id, allowed_origins: stored });
    return reply;
  });

  // Payout address per mode (issue 4): live intents pay here; test mode has one provisioned at creation.
  app.post<{ Params: { id: string } }>('/ops/api/merchants/:id/payout', async (req, reply) => {
    const body = parse(SetPayoutRequest, req);
    try {
      decodeAddress(body.address, NETWORKS[body.mode].hrp);
    } catch (err) {
      throw new AppError('invalid_body', `address: ${err instanceof Error ? err.message : 'not a valid address'} (expected hrp ${NETWORKS[body.mode].hrp} for ${body.mode})`);
    }
    try {
      await d.merchants.setPayoutAddress(req.params.id, body.mode, body.address);
    } catch (err) {
      // Foreign-key violation: no such merchant.
      if (typeof err === 'object' && err !== null && 'code' in err && err.code === '23503') throw new AppError('not_found', 'No such merchant.');
      throw err;
    }
    sendJson(reply, 200, { merchant: req.params.id, mode: body.mode, payout_address: body.address });
    return reply;
  });

  for (const [action, status] of [
    ['suspend', 'suspended'],
    ['activate', 'active'],
  ] as const) {
    app.post<{ Params: { id: string } }>(`/ops/api/merchants/:id/${action}`, async (req, reply) => {
      if (!(await d.merchants.setStatus(req.params.id, status))) throw new AppError('not_found', 'No such merchant.');
      sendJson(reply, 200, { id: req.params.id, status });
      return reply;
    });
  }
}
