/**
 * Payments of the session's mode: the list (status, creation dates, order id; cursor pages),
 * one payment with its timeline from the actor journal, and that timeline live over SSE from
 * the snapshot feed: one database read when a stream opens, none per update.
 *
 *   id: <actor version>
 *   event: entry
 *   data: {"entry": {seq, type, state_before, state_after, at}, "payment": <PaymentIntent>}
 */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { PaymentIntentContext } from '../../machines/payment-intent/context.ts';
import { PAYMENT_INTENT_STATUSES, toResource } from '../../machines/payment-intent/view.ts';
import type { PaymentRow } from '../../runtime/dashboard/reads.ts';
import { INTENT_ID, lastEventId } from '../checkout/events.ts';
import { AppError } from '../errors.ts';
import { isCalendarDate } from '../http/calendar.ts';
import { admitDash, parseBody, type Dash, type StreamBook } from './context.ts';

const day = z.string().refine(isCalendarDate, 'a date the calendar has, YYYY-MM-DD');
const ListQuery = z.strictObject({
  status: z.enum(PAYMENT_INTENT_STATUSES as [string, ...string[]]).optional(),
  from: day.optional(),
  to: day.optional(),
  order_id: z.string().max(120).optional(),
  starting_after: z.string().regex(INTENT_ID).optional(),
  limit: z.coerce.number().int().min(1).max(100).default(20),
});

export function paymentRoutes(app: FastifyInstance, x: Dash, streams: StreamBook): void {
  const reads = x.svc.reads;
  const resource = (r: PaymentRow) => toResource(r.snapshot.context as PaymentIntentContext, r.state, { baseUrl: x.d.baseUrl() });

  app.get('/dashboard/api/payments', async (req, reply) => {
    const who = await admitDash(x, req, reply);
    const q = parseBody(ListQuery, req.query);
    // `to` is a day: payments created on it are included.
    const to = q.to ? new Date(Date.parse(`${q.to}T00:00:00Z`) + 86_400_000).toISOString() : undefined;
    const page = await reads.payments({ merchant: who.merchant, mode: who.mode, limit: q.limit, status: q.status, from: q.from, to, orderId: q.order_id, after: q.starting_after });
    return { object: 'list', mode: who.mode, has_more: page.hasMore, data: page.rows.map(resource) };
  });

  app.get<{ Params: { id: string } }>('/dashboard/api/payments/:id', async (req, reply) => {
    const who = await admitDash(x, req, reply);
    const row = INTENT_ID.test(req.params.id) ? await reads.payment(who.merchant, who.mode, req.params.id) : null;
    if (!row) throw new AppError('not_found');
    const ctx = row.snapshot.context as PaymentIntentContext;
    // Refunds holding part of the cap, then confirmed ones: the refund actors hold the rest.
    const refunds = [...(ctx.refund_holds ?? []), ...(ctx.refunds ?? [])].map((r) => ({ id: r.refund_id, amount: r.amount }));
    return { payment: resource(row), version: row.version, timeline: await reads.journal(row.id), refunds };
  });

  app.get<{ Params: { id: string }; Querystring: { last_event_id?: string } }>('/dashboard/api/payments/:id/events', { exposeHeadRoute: false }, async (req, reply) => {
    const who = await admitDash(x, req, reply);
    const feed = x.d.feed;
    if (!feed || !INTENT_ID.test(req.params.id)) throw new AppError('not_found');
    streams.admit();
    const id = req.params.id;
    // Listen first, then read: no version committed in between is missed.
    type Item = PaymentRow & { event?: string };
    const queued: Item[] = [];
    let push = (r: Item): void => void queued.push(r);
    const detach = feed.subscribe(id, (item) => {
      if (item.merchant === who.merchant && item.mode === who.mode) push({ id, state: item.status, version: item.version, snapshot: item.snapshot, event: item.event });
    });
    await feed.ready?.();
    const row = await reads.payment(who.merchant, who.mode, id);
    if (!row) {
      detach();
      throw new AppError('not_found');
    }
    const stream = streams.open(req, reply, detach);
    const since = lastEventId(req);
    let last = since ?? row.version;
    const send = (r: Item): void => {
      if (r.version <= last) return;
      const entry = { seq: r.version, type: r.event ?? '', state_before: null, state_after: r.state, at: new Date().toISOString() };
      stream.send('entry', { entry, payment: resource(r) }, r.version);
      last = r.version;
    };
    // Entries committed after the page read its timeline: from the journal, once.
    if (since !== null && since < row.version) {
      const payment = resource(row);
      for (const entry of (await reads.journal(id)).filter((e) => e.seq > since)) {
        stream.send('entry', { entry, payment }, entry.seq);
      }
      last = row.version;
    }
    push = send;
    for (const r of queued.splice(0)) send(r);
    return reply;
  });
}
