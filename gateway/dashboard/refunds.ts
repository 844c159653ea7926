/**
 * Refunds from the dashboard (live mode only, spec rule 3): create one for a payment (the
 * same command as `POST /api/v1/refunds`), show its unsigned transfer and the exact
 * `anmpay refund sign` command, take a pasted signed transaction and submit it, and follow
 * its status live over SSE from the snapshot feed (one read when the stream opens):
 *
 *   id: <actor version>
 *   event: refund
 *   data: {"refund": <Refund>, "command": string | null}
 */
import type { FastifyInstance } from 'fastify';
import type { RefundContext } from '../../machines/refund/context.ts';
import { refundResource, type RefundStatus } from '../../machines/refund/view.ts';
import type { SnapshotFeedItem } from '../../runtime/engine/actor-types.ts';
import { AppError } from '../errors.ts';
import { isPlainObject } from '../http/body.ts';
import { REFUND_ID, refundCommands, type RefundBody } from '../refunds/commands.ts';
import { validateRefund } from '../routes/refund-input.ts';
import { admitDash, type Dash, type StreamBook } from './context.ts';

/** The refund with what the merchant runs to sign it (the key is theirs to fill in). */
function withCommand(r: RefundBody) {
  const waiting = r.status === 'REQUIRES_SIGNATURE';
  return { refund: r, command: waiting ? `ANMPAY_API_KEY=<your live secret key> anmpay refund sign ${r.id} --wallet <payout wallet file>` : null };
}

export function refundRoutes(app: FastifyInstance, x: Dash, streams: StreamBook): void {
  const commands = refundCommands(x.d);

  app.post('/dashboard/api/refunds', async (req, reply) => {
    const who = await admitDash(x, req, reply);
    const input = validateRefund(req.body);
    const res = await commands.create(who, input, null);
    return reply.code(res.status).send(withCommand(res.body as RefundBody));
  });

  app.get<{ Params: { id: string } }>('/dashboard/api/refunds/:id', async (req, reply) => {
    const who = await admitDash(x, req, reply);
    const r = await commands.own(who, req.params.id);
    return withCommand(refundResource(r.snapshot.context as RefundContext, r.state as RefundStatus));
  });

  app.post<{ Params: { id: string } }>('/dashboard/api/refunds/:id/submit', async (req, reply) => {
    const who = await admitDash(x, req, reply);
    const b: unknown = req.body;
    return withCommand(await commands.submit(who, req.params.id, isPlainObject(b) ? b.signed_transaction : undefined));
  });

  app.get<{ Params: { id: string } }>('/dashboard/api/refunds/:id/events', { exposeHeadRoute: false }, async (req, reply) => {
    const who = await admitDash(x, req, reply);
    const feed = x.d.feed;
    const id = req.params.id;
    if (!feed || !REFUND_ID.test(id)) throw new AppError('not_found', 'No such refund.');
    streams.admit();
    // Listen first, then read: no version committed in between is missed.
    const queued: SnapshotFeedItem[] = [];
    let push = (item: SnapshotFeedItem): void => void queued.push(item);
    const detach = feed.subscribe(id, (item) => {
      if (item.merchant === who.merchant && item.mode === who.mode) push(item);
    });
    await feed.ready?.();
    let r;
    try {
      r = await commands.own(who, id);
    } catch (err) {
      detach();
      throw err;
    }
    const stream = streams.open(req, reply, detach);
    let last = r.version;
    stream.send('refund', withCommand(refundResource(r.snapshot.context as RefundContext, r.state as RefundStatus)), last);
    push = (item) => {
      if (item.version <= last) return;
      last = item.version;
      stream.send('refund', withCommand(refundResource(item.snapshot.context as RefundContext, item.status as RefundStatus)), last);
    };
    for (const item of queued.splice(0)) push(item);
    return reply;
  });
}
