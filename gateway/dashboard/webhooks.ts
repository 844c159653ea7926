/**
 * The webhook endpoint of the session's mode (spec Events): set the URL (the secret is shown
 * once), rotate (old and new secrets both sign during the grace), send a test event, and the
 * delivery log with every attempt, redeliver. The runtime's webhook functions do the work, as
 * behind the operator API.
 */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { getDelivery, listDeliveries, redeliver } from '../../runtime/webhooks/deliveries.ts';
import { DEFAULT_ROTATION_GRACE_MS, listEndpoints, rotateSecret, setEndpoint } from '../../runtime/webhooks/endpoints.ts';
import { sendTestEvent } from '../../runtime/webhooks/test-event.ts';
import { AppError } from '../errors.ts';
import { admitDash, parseBody, type Dash } from './context.ts';

const SetUrl = z.strictObject({ url: z.string().min(1).max(2048) });
const Page = z.strictObject({ starting_after: z.string().max(64).optional(), status: z.enum(['pending', 'succeeded', 'failed', 'disabled']).optional() });

export function webhookRoutes(app: FastifyInstance, x: Dash): void {
  const admin = x.d.webhookAdmin;
  if (!admin) return;
  const db = admin.db;
  const policy = { allowPrivate: admin.allowPrivateWebhooks ?? process.env.ANMPAY_ALLOW_PRIVATE_WEBHOOKS === '1', ...(admin.lookupAll ? { lookupAll: admin.lookupAll } : {}) };

  app.get('/dashboard/api/webhooks', async (req, reply) => {
    const who = await admitDash(x, req, reply);
    const q = parseBody(Page, req.query);
    const endpoint = (await listEndpoints(db, who.merchant)).find((e) => e.mode === who.mode) ?? null;
    const deliveries = await listDeliveries(db, who.merchant, { mode: who.mode, limit: 20, status: q.status, starting_after: q.starting_after });
    return { mode: who.mode, endpoint, deliveries };
  });

  app.post('/dashboard/api/webhooks', async (req, reply) => {
    const who = await admitDash(x, req, reply);
    const { url } = parseBody(SetUrl, req.body);
    const res = await setEndpoint(db, { merchant: who.merchant, mode: who.mode, url }, policy);
    return reply.code(res.created ? 201 : 200).send(res);
  });

  app.post('/dashboard/api/webhooks/rotate', async (req, reply) => {
    const who = await admitDash(x, req, reply);
    return rotateSecret(db, { merchant: who.merchant, mode: who.mode, graceMs: admin.rotationGraceMs ?? DEFAULT_ROTATION_GRACE_MS });
  });

  app.post('/dashboard/api/webhooks/test', async (req, reply) => {
    const who = await admitDash(x, req, reply);
    const endpoint = (await listEndpoints(db, who.merchant)).find((e) => e.mode === who.mode);
    if (!endpoint) throw new AppError('not_found', 'Set a webhook URL for this mode first.');
    const r = await sendTestEvent(db, who.merchant, who.mode);
    admin.onRedeliver?.();
    return reply.code(202).send({ event_id: r.event_id });
  });

  app.get<{ Params: { id: string } }>('/dashboard/api/webhooks/deliveries/:id', async (req, reply) => {
    const who = await admitDash(x, req, reply);
    const dl = await getDelivery(db, who.merchant, req.params.id);
    if (dl.mode !== who.mode) throw new AppError('not_found');
    return dl;
  });

  app.post<{ Params: { id: string } }>('/dashboard/api/webhooks/deliveries/:id/redeliver', async (req, reply) => {
    const who = await admitDash(x, req, reply);
    const dl = await getDelivery(db, who.merchant, req.params.id);
    if (dl.mode !== who.mode) throw new AppError('not_found');
    const res = await redeliver(db, who.merchant, req.params.id);
    admin.onRedeliver?.();
    return reply.code(202).send(res);
  });
}
