/**
 * `POST /api/v1/purchase` (idempotency-key required; both legs verified, nothing settled
 * unless both do) and `GET /api/v1/purchases/{intent_id}` (DESIGN §5 "Purchase").
 */
import type { FastifyPluginAsync } from 'fastify';
import { z } from 'zod';
import { AppError } from '../errors.ts';
import { sendJson } from '../http/reply.ts';
import type { MarketDeps } from './deps.ts';
import { ipRateLimit } from './rate-limit.ts';

const purchaseBody = z.object({
  intent_id: z.string().min(1).max(100),
  payment: z.object({ legs: z.object({ seller: z.unknown().optional(), fee: z.unknown().optional() }).passthrough() }),
});

const purchases: FastifyPluginAsync<{ deps: MarketDeps }> = async (app, { deps }) => {
  app.post('/api/v1/purchase', { preHandler: ipRateLimit(deps.perIpPerMinute ?? 60) }, async (req, reply) => {
    const key = req.headers['idempotency-key'];
    if (typeof key !== 'string' || key.length === 0) throw new AppError('idempotency_key_required', 'An idempotency-key header is required to purchase.');
    if (key.length > 255) throw new AppError('bad_request', 'idempotency-key is over 255 characters.');
    const r = purchaseBody.safeParse(req.body);
    if (!r.success) throw new AppError('invalid_body', r.error.issues.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`).join('; '));
    if (!/^pi_[0-9a-z]+$/.test(r.data.intent_id)) throw new AppError('not_found', 'No purchase intent with this id.');
    sendJson(reply, 200, await deps.purchases.purchase(r.data.intent_id, r.data.payment.legs));
  });

  app.get<{ Params: { intent_id: string } }>('/api/v1/purchases/:intent_id', async (req, reply) => {
    const res = /^pi_[0-9a-z]+$/.test(req.params.intent_id) ? await deps.purchases.resource(req.params.intent_id) : null;
    if (!res) throw new AppError('not_found', 'No purchase intent with this id.');
    sendJson(reply, 200, res);
  });
};

export default purchases;
