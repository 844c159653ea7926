/**
 * `POST /api/v1/purchase` (idempotency-key required; both legs verified, nothing settled
 * unless both do) and `GET /api/v1/purchases/{intent_id}` (DESIGN §5 "Purchase"). The key
 * behaves as the merchant API's (spec merchant-payment-api.md "Endpoints" rule 1), scoped per
 * purchase intent (ADR 0026): the first attempt runs; the same key and body replay its
 * response with `idempotent-replay: true`; another body is 409 `idempotency_key_reused`; a
 * retry while the first runs is 429 with `Retry-After`. A refused attempt keeps nothing.
 */
import type { FastifyPluginAsync } from 'fastify';
import { z } from 'zod';
import { AppError, issuesMessage } from '../errors.ts';
import { idempotencyKey, requestHash } from '../http/idempotency.ts';
import { JSON_TYPE, sendJson } from '../http/reply.ts';
import type { MarketDeps } from './deps.ts';
import { ipRateLimit } from './rate-limit.ts';

/** A field outside the schema, at any depth, is `400 invalid_body` (docs/errors.md), before the key is claimed. */
const purchaseBody = z.strictObject({
  intent_id: z.string().min(1).max(100),
  // Absent, or without `legs`: no fee leg, refused as `402 fee_leg_missing` at that check's
  // turn, like `legs` without `fee` (marketplace.md "A proof missing its fee leg does not verify"; ADR 0084).
  // `payment` may be the split scheme's whole payload (`ExactSplitEvmScheme`, `ExactAnmSplitScheme`): its `intent_id` too.
  payment: z.strictObject({ intent_id: z.string().max(100).optional(), legs: z.strictObject({ seller: z.unknown().optional(), fee: z.unknown().optional() }).optional() }).optional(),
}).refine((b) => b.payment?.intent_id === undefined || b.payment.intent_id === b.intent_id, { path: ['payment', 'intent_id'], message: 'names another intent than intent_id' });

const PURCHASE_ROUTE = 'POST /api/v1/purchase';
const INTENT_ID = /^pi_[0-9a-z]+$/;

const purchases: FastifyPluginAsync<{ deps: MarketDeps }> = async (app, { deps }) => {
  app.post('/api/v1/purchase', { onRequest: ipRateLimit(deps.perIpPerMinute ?? 60) }, async (req, reply) => {
    const raw = req.headers['idempotency-key'];
    if (raw === undefined || raw === '') throw new AppError('idempotency_key_required', 'An idempotency-key header is required to purchase.');
    const key = idempotencyKey(req);
    const r = purchaseBody.safeParse(req.body);
    if (!r.success) throw new AppError('invalid_body', issuesMessage(r.error.issues));
    const intentId = r.data.intent_id;
    const legs = r.data.payment?.legs ?? {};
    if (!INTENT_ID.test(intentId)) throw new AppError('not_found', 'No purchase intent with this id.');
    // The ledger states the legs name ride with the claim, where the ledger can (ADR 0044).
    const ledger = deps.purchases.ledgerReadFor(legs);
    // The actor's row as this process holds it, if it does: the claim then sends no snapshot back.
    const claim = await deps.purchaseKeys.claim(intentId, key, requestHash(PURCHASE_ROUTE, req.body), ledger?.read, deps.purchases.kept(intentId));
    if (claim.outcome === 'replay') return reply.code(claim.status).headers(claim.headers).header('idempotent-replay', 'true').send(claim.body);
    if (claim.outcome === 'reused') throw new AppError('idempotency_key_reused', 'This idempotency-key was already used for this intent with a different request body.');
    if (claim.outcome === 'in_flight') throw new AppError('rate_limited', 'A purchase with this idempotency-key is still being processed.', { retryAfter: 1, headers: { 'Retry-After': '1' } });
    const headers = { 'content-type': JSON_TYPE };
    // The first response is a pure function of the VERIFIED actor: recorded in the statement
    // that writes it (ADR 0034), or on its own when this request did not make it VERIFIED.
    let rendered: string | undefined;
    const record = deps.purchaseKeys.recording(intentId, key, 200, headers, (v) => (rendered = JSON.stringify(deps.purchases.responseOf(v))));
    let body: string;
    try {
      const known = ledger && claim.ledger ? ledger.known(claim.ledger) : undefined;
      const done = await deps.purchases.purchase(intentId, legs, { seen: claim.purchase, record, ...(known && { known }), ...(ledger && { decoded: ledger.decoded }) });
      if (done.recorded) return reply.code(200).type(JSON_TYPE).send(rendered);
      body = JSON.stringify(done.response);
    } catch (err) {
      await deps.purchaseKeys.release(intentId, key).catch(() => undefined);
      throw err;
    }
    // The purchase stands whether or not its record is written: without it a retry runs the
    // purchase again (after the takeover delay), and the same legs answer the same.
    await deps.purchaseKeys.done(intentId, key, 200, headers, body).catch((err: unknown) => req.log.warn({ err }, 'purchase idempotency record not written'));
    return reply.code(200).type(JSON_TYPE).send(body);
  });

  app.get<{ Params: { intent_id: string } }>('/api/v1/purchases/:intent_id', async (req, reply) => {
    const res = INTENT_ID.test(req.params.intent_id) ? await deps.purchases.resource(req.params.intent_id) : null;
    if (!res) throw new AppError('not_found', 'No purchase intent with this id.');
    sendJson(reply, 200, res);
  });
};

export default purchases;
