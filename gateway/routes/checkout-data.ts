/**
 * `GET /c/{id}/payment.json`: what a wallet needs to pay an intent. Public like the checkout
 * page (the unguessable id is the capability), limited per IP.
 */
import type { FastifyInstance } from 'fastify';
import type { PaymentIntentContext } from '../../machines/payment-intent/context.ts';
import type { GatewayDeps } from '../deps.ts';
import { AppError } from '../errors.ts';
import { admit, ipLimit, refuse } from '../http/admission.ts';
import { sendJson } from '../http/reply.ts';

export default async function checkoutData(app: FastifyInstance, opts: { deps: GatewayDeps }): Promise<void> {
  const d = opts.deps;
  app.get<{ Params: { id: string } }>('/c/:id/payment.json', async (req, reply) => {
    const a = await admit(d.gate, req, reply, [ipLimit]);
    if (!a.admitted) return refuse(reply, a);
    const row = /^pay_[a-z2-7]{24}$/.test(req.params.id) ? await d.intents.byId(req.params.id) : null;
    if (!row) throw new AppError('not_found', 'No such payment intent.');
    const c = row.snapshot.context as PaymentIntentContext;
    sendJson(reply, 200, {
      id: c.intent_id,
      status: row.state,
      network: c.mode,
      payment_address: c.payment_address,
      treasury_address: c.treasury_address,
      merchant_amount: c.merchant_amount,
      protocol_fee: c.protocol_fee,
      anm_amount: c.anm_amount,
      payment_reference: c.payment_reference,
      expires_at: new Date(c.expires_at).toISOString(),
    });
    return reply;
  });
}
