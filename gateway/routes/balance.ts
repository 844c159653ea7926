/** `GET /api/v1/balance`: figures computed from the merchant's payment-intent snapshots in the key's mode. */
import type { FastifyInstance } from 'fastify';
import { formatAnm } from '../../machines/money/money.ts';
import type { GatewayDeps } from '../deps.ts';
import { admit, ipLimit, refuse, secretKey } from '../http/admission.ts';
import { sendJson } from '../http/reply.ts';

export default async function balance(app: FastifyInstance, opts: { deps: GatewayDeps }): Promise<void> {
  const d = opts.deps;
  const steps = [ipLimit, ...secretKey(d.pepper)];
  app.get('/api/v1/balance', async (req, reply) => {
    const a = await admit(d.gate, req, reply, steps);
    if (!a.admitted) return refuse(reply, a);
    const key = a.key!;
    const b = await d.intents.balance(key.merchant, key.mode);
    sendJson(reply, 200, {
      object: 'balance',
      mode: key.mode,
      currency: 'ANM',
      settled: b.settled.toString(),
      settled_formatted: formatAnm(b.settled),
      pending: b.pending.toString(),
      pending_formatted: formatAnm(b.pending),
      protocol_fees_paid: b.protocol_fees_paid.toString(),
      payout_address: key.payoutAddress,
    });
    return reply;
  });
}
