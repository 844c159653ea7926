/**
 * The home page's JSON: the balance of the session's mode (as `GET /api/v1/balance` computes
 * it), the latest payments, and the setup checklist (payout address, webhook, keys).
 */
import type { FastifyInstance } from 'fastify';
import { formatAnm } from '../../machines/money/money.ts';
import type { PaymentIntentContext } from '../../machines/payment-intent/context.ts';
import { toResource } from '../../machines/payment-intent/view.ts';
import { admitDash, type Dash } from './context.ts';

export function homeRoutes(app: FastifyInstance, x: Dash): void {
  app.get('/dashboard/api/home', async (req, reply) => {
    const who = await admitDash(x, req, reply);
    const [b, recent, setup] = await Promise.all([
      x.d.intents.balance(who.merchant, who.mode),
      x.svc.reads.payments({ merchant: who.merchant, mode: who.mode, limit: 5 }),
      x.svc.reads.setup(who.merchant, who.mode),
    ]);
    return {
      mode: who.mode,
      balance: {
        settled: b.settled.toString(),
        settled_formatted: formatAnm(b.settled),
        pending: b.pending.toString(),
        pending_formatted: formatAnm(b.pending),
        protocol_fees_paid: b.protocol_fees_paid.toString(),
      },
      recent: recent.rows.map((r) => toResource(r.snapshot.context as PaymentIntentContext, r.state, { baseUrl: x.d.baseUrl() })),
      setup,
    };
  });
}
