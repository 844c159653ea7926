/**
 * `GET /c/{id}/events`: Server-Sent Events of an intent's checkout status, fed by the
 * snapshot feed through the hub (no database read per client after the first). Format,
 * resume and final states: docs/checkout.md.
 *
 *   id: <actor version>
 *   event: status
 *   data: <CheckoutStatusView JSON>
 *
 * A `status` event goes out when the status, depth, deadline, transaction or finality the
 * customer sees changes. `: hb` comments keep proxies from timing the stream out. When the
 * intent is final for the page an `end` event is sent and the stream closed; a reconnect that
 * already has the final version gets 204, which tells EventSource to stop.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { checkoutChanged, checkoutFinalAt, toCheckoutStatus, type CheckoutStatusView } from '../../machines/payment-intent/checkout-view.ts';
import type { GatewayDeps } from '../deps.ts';
import { AppError } from '../errors.ts';
import { openSse, type SseStream } from '../http/sse.ts';
import type { CheckoutHub, IntentState } from './hub.ts';

export const INTENT_ID = /^pay_[a-z2-7]{24}$/;
export const HEARTBEAT_MS = 15_000;
const DEFAULT_MAX_STREAMS = 10_000;
const DEFAULT_MAX_PER_IP = 100;

/** `Last-Event-ID` (a reconnect) wins over `?last_event_id=` (the version the page was rendered at). */
export function lastEventId(req: FastifyRequest<{ Querystring: { last_event_id?: string } }>): number | null {
  const raw = req.headers['last-event-id'] ?? req.query.last_event_id;
  const v = Array.isArray(raw) ? raw[0] : raw;
  return v !== undefined && /^\d{1,9}$/.test(v) ? Number(v) : null;
}

export function checkoutEvents(app: FastifyInstance, d: GatewayDeps, hub: CheckoutHub): void {
  const now = d.now ?? Date.now;
  const heartbeatMs = d.checkoutStreams?.heartbeatMs ?? HEARTBEAT_MS;
  const maxStreams = d.checkoutStreams?.maxStreams ?? DEFAULT_MAX_STREAMS;
  const maxPerIp = d.checkoutStreams?.maxPerIp ?? DEFAULT_MAX_PER_IP;
  const open = new Set<SseStream>();
  const perIp = new Map<string, number>();

  // Streams never end by themselves: end them so close() does not wait on them.
  app.addHook('preClose', async () => {
    for (const s of [...open]) s.close();
    hub.clear();
  });

  app.get<{ Params: { id: string }; Querystring: { last_event_id?: string } }>(
    '/c/:id/events',
    { exposeHeadRoute: false },
    async (req, reply: FastifyReply) => {
      if (!INTENT_ID.test(req.params.id)) throw new AppError('not_found', 'No such payment intent.');
      if (open.size >= maxStreams) throw new AppError('rate_limited', 'Too many open event streams.', { retryAfter: 5, headers: { 'Retry-After': '5' } });
      const ipCount = perIp.get(req.ip) ?? 0;
      if (ipCount >= maxPerIp) throw new AppError('rate_limited', 'Too many open event streams from this address.', { retryAfter: 5, headers: { 'Retry-After': '5' } });
      perIp.set(req.ip, ipCount + 1);
      const releaseIp = () => {
        const n = (perIp.get(req.ip) ?? 1) - 1;
        if (n <= 0) perIp.delete(req.ip);
        else perIp.set(req.ip, n);
      };

      const queued: IntentState[] = [];
      let deliver: (s: IntentState) => void = (s) => queued.push(s);
      let attached;
      try {
        attached = await hub.attach(req.params.id, (s) => deliver(s));
      } catch (err) {
        releaseIp();
        throw err;
      }
      if (!attached) {
        releaseIp();
        throw new AppError('not_found', 'No such payment intent.');
      }
      const { current, detach } = attached;
      const since = lastEventId(req);
      let last = toCheckoutStatus(current.ctx, current.status, { version: current.version, event: current.event, now: now() });

      if (last.final && since !== null && since >= last.version) {
        detach();
        releaseIp();
        return reply.code(204).header('Cache-Control', 'no-store').send();
      }

      let finalTimer: ReturnType<typeof setTimeout> | undefined;
      const stream = openSse(
        req,
        reply,
        () => {
          clearTimeout(finalTimer);
          detach();
          releaseIp();
          open.delete(stream);
        },
        heartbeatMs,
      );
      open.add(stream);
      const send = (view: CheckoutStatusView) => stream.send('status', view, view.version);

      let state = current;
      const finish = () => {
        stream.send('end', { reason: 'final' });
        stream.close();
      };
      /** An EXPIRED or FAILED intent becomes final when its late-payment watch ends, with no event. */
      const armFinalTimer = () => {
        clearTimeout(finalTimer);
        const at = checkoutFinalAt(state.ctx, state.status);
        if (at === null || at <= 0) return;
        // setTimeout holds 32-bit delays; re-arm for longer watches.
        finalTimer = setTimeout(() => update(state, true), Math.min(Math.max(0, at - now()), 2 ** 31 - 1));
        finalTimer.unref();
      };
      const update = (s: IntentState, force = false) => {
        if (stream.closed) return;
        if (!force && s.version <= last.version) return;
        state = s;
        const next = toCheckoutStatus(s.ctx, s.status, { version: s.version, event: s.event, now: now() });
        if (checkoutChanged(last, next)) send(next);
        last = next;
        if (next.final) finish();
        else armFinalTimer();
      };

      if (since === null || last.version > since) send(last);
      if (last.final) {
        finish();
        return reply;
      }
      armFinalTimer();
      deliver = update;
      for (const s of queued.splice(0)) update(s);
      return reply;
    },
  );
}
