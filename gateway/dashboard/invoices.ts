/**
 * Invoices from the dashboard (DESIGN §7): list, create, finalize, void and mark
 * uncollectible in the login's mode, through the same commands as `/api/v1/invoices`; and
 * the mode's invoices live over SSE from the snapshot feed (no database read per update),
 * each with its actor version, so the page keeps whichever of the list and the stream is newer:
 *
 *   event: invoice
 *   data: {"invoice": <Invoice>, "version": number}
 */
import type { FastifyInstance } from 'fastify';
import { AppError } from '../errors.ts';
import type { SseStream } from '../http/sse.ts';
import { invoiceCommands } from '../invoices/commands.ts';
import { validateInvoice } from '../invoices/input.ts';
import { validateInvoiceList } from '../invoices/api.ts';
import { admitDash, type Dash, type StreamBook } from './context.ts';

export function invoiceRoutes(app: FastifyInstance, x: Dash, streams: StreamBook): void {
  if (!x.d.invoices) return;
  const commands = invoiceCommands(x.d);

  app.get('/dashboard/api/invoices', async (req, reply) => {
    const who = await admitDash(x, req, reply);
    const q = validateInvoiceList(req.query);
    const page = await x.d.intents.list({ merchant: who.merchant, mode: who.mode, kind: 'invoice', limit: q.limit, status: q.status, startingAfter: q.startingAfter });
    return { object: 'list', has_more: page.hasMore, data: page.rows.map((r) => ({ ...commands.render(r.snapshot.context, r.state), version: r.version })) };
  });

  app.get('/dashboard/api/invoices/events', { exposeHeadRoute: false }, async (req, reply) => {
    const who = await admitDash(x, req, reply);
    const feed = x.d.feed;
    if (!feed?.subscribeOwner) throw new AppError('not_found');
    streams.admit();
    // The page reads its list once this stream is open, so nothing committed in between is lost.
    let stream: SseStream | null = null;
    const detach = feed.subscribeOwner({ kind: 'invoice', merchant: who.merchant, mode: who.mode }, (item) => {
      stream?.send('invoice', { invoice: commands.render(item.snapshot.context, item.status), version: item.version });
    });
    await feed.ready?.();
    stream = streams.open(req, reply, detach);
    return reply;
  });

  app.post('/dashboard/api/invoices', async (req, reply) => {
    const who = await admitDash(x, req, reply);
    const res = await commands.create(who, validateInvoice(req.body), null);
    return reply.code(res.status).send(res.body);
  });

  for (const [path, cmd] of [
    ['finalize', 'finalize'],
    ['void', 'void'],
    ['mark-uncollectible', 'mark_uncollectible'],
  ] as const) {
    app.post<{ Params: { id: string } }>(`/dashboard/api/invoices/:id/${path}`, async (req, reply) => {
      const who = await admitDash(x, req, reply);
      return commands.command(who, req.params.id, cmd);
    });
  }
}
