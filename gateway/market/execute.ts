/**
 * `POST /api/v1/route/execute` (marketplace.md "Endpoints"; DESIGN §5 "Routed execution"):
 * the fee leg verified against the quote, the buyer's seller payment header forwarded
 * verbatim with `body`, and the seller's answer returned. A seller answer of any status is a
 * 200 here (its status is in the body); a seller that cannot be reached is 502. The answer is
 * sent before it is recorded and before the fee is taken (ADR 0046).
 */
import type { FastifyPluginAsync } from 'fastify';
import { AppError } from '../errors.ts';
import { sendJson } from '../http/reply.ts';
import type { MarketDeps } from './deps.ts';
import { executeInput } from './execute-body.ts';
import { ipRateLimit } from './rate-limit.ts';

const INTENT_ID = /^pi_[0-9a-z]+$/;

const execute: FastifyPluginAsync<{ deps: MarketDeps }> = async (app, { deps }) => {
  app.post('/api/v1/route/execute', { onRequest: ipRateLimit(deps.perIpPerMinute ?? 60) }, async (req, reply) => {
    const data = executeInput(req.body);
    if (!INTENT_ID.test(data.intent_id)) throw new AppError('not_found', 'No purchase intent with this id.');
    const input = { intentId: data.intent_id, fee: data.fee_payment?.legs?.fee, sellerPayment: data.seller_payment, body: data.body };
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
