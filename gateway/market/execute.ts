/**
 * `POST /api/v1/route/execute` (marketplace.md "Endpoints"; DESIGN §5 "Routed execution"):
 * the fee leg verified against the quote, the buyer's seller payment header forwarded
 * verbatim with `body`, and the seller's answer returned. A seller answer of any status is a
 * 200 here (its status is in the body); a seller that cannot be reached is 502. The answer is
 * sent before it is recorded and before the fee is taken (ADR 0046).
 */
import type { FastifyPluginAsync } from 'fastify';
import { z } from 'zod';
import { AppError, issuesMessage } from '../errors.ts';
import { sendJson } from '../http/reply.ts';
import type { MarketDeps } from './deps.ts';
import { ipRateLimit } from './rate-limit.ts';

const executeBody = z.strictObject({
  intent_id: z.string().min(1).max(100),
  // Absent, or without `legs`: a payment with no fee leg, which the execution refuses as
  // `402 fee_leg_missing` at that check's turn (marketplace.md "A proof missing its fee leg does not verify"; ADR 0084).
  // `fee_payment` may be the split scheme's whole payload: its `intent_id`, and a `seller` leg, not used
  // (the seller is paid by `seller_payment`, the header its own 402 asked for).
  fee_payment: z.strictObject({ intent_id: z.string().max(100).optional(), legs: z.strictObject({ fee: z.unknown().optional(), seller: z.unknown().optional() }).optional() }).optional(),
  seller_payment: z.string().min(1).max(16_384),
  body: z.record(z.string(), z.unknown()).optional(),
}).refine((b) => b.fee_payment?.intent_id === undefined || b.fee_payment.intent_id === b.intent_id, { path: ['fee_payment', 'intent_id'], message: 'names another intent than intent_id' });

const INTENT_ID = /^pi_[0-9a-z]+$/;

const execute: FastifyPluginAsync<{ deps: MarketDeps }> = async (app, { deps }) => {
  app.post('/api/v1/route/execute', { onRequest: ipRateLimit(deps.perIpPerMinute ?? 60) }, async (req, reply) => {
    const r = executeBody.safeParse(req.body);
    if (!r.success) throw new AppError('invalid_body', issuesMessage(r.error.issues));
    if (!INTENT_ID.test(r.data.intent_id)) throw new AppError('not_found', 'No purchase intent with this id.');
    const input = { intentId: r.data.intent_id, fee: r.data.fee_payment?.legs?.fee, sellerPayment: r.data.seller_payment, body: r.data.body };
    // The seller's answer goes back before it is recorded (ADR 0046); what fails after that
    // can no longer change the response: the execution's deadline or watch settles it.
    let sent = false;
    try {
      await deps.executions.execute(input, (out) => {
        sent = true;
        sendJson(reply, 200, out);
      });
    } catch (err) {
      if (!sent) throw err;
      req.log.error({ err, intent_id: input.intentId }, 'routed execution: the answer was sent, recording it failed');
    }
  });
};

export default execute;
