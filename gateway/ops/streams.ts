/**
 * The console's live streams (Server-Sent Events), fed by the snapshot feed:
 *
 * - `/ops/streams/actors/{id}`: `event: state` with `{ version, state, active, event }` on
 *   every commit of that actor (`active`: the state nodes lit, from the snapshot value). One
 *   read of the actor row when the stream opens, none after.
 * - `/ops/streams/overview`: `event: overview` (the whole overview, shared by every stream,
 *   see overview-hub.ts) and `event: transition` for each commit anywhere.
 */
import type { FastifyInstance } from 'fastify';
import { activeStates } from '../../runtime/ops/graph.ts';
import { AppError } from '../errors.ts';
import type { OpsConsoleDeps } from './deps.ts';
import { OverviewHub } from './overview-hub.ts';
import { openSse, type SseStream } from '../http/sse.ts';

export function opsStreams(app: FastifyInstance, d: OpsConsoleDeps): OverviewHub {
  const open = new Set<SseStream>();
  const hub = new OverviewHub({ feed: d.feed, read: () => d.console.overview(), ...d.overview, onError: (err) => app.log.error({ err }, 'ops overview refresh failed') });

  app.addHook('preClose', async () => {
    for (const s of [...open]) s.close();
    hub.stop();
  });

  app.get<{ Params: { id: string } }>('/ops/streams/actors/:id', { exposeHeadRoute: false }, async (req, reply) => {
    const id = req.params.id;
    const queued: Array<{ version: number; state: string; active: string[]; event: string }> = [];
    let push = (s: (typeof queued)[number]) => void queued.push(s);
    // Subscribe first and read after the feed is live, so no version between the two is lost.
    const unsubscribe = d.feed.subscribe(id, (item) => push({ version: item.version, state: item.status, active: activeStates(item.snapshot.value), event: item.event }));
    let row;
    try {
      await d.feed.ready?.();
      row = await d.console.actors.get(id);
    } catch (err) {
      unsubscribe();
      throw err;
    }
    if (!row) {
      unsubscribe();
      throw new AppError('not_found', 'No such actor.');
    }
    const stream = openSse(req, reply, () => {
      unsubscribe();
      open.delete(stream);
    });
    open.add(stream);
    let last = row.version;
    stream.send('state', { version: row.version, state: row.state, active: activeStates(row.snapshot.value), event: null }, row.version);
    push = (s) => {
      if (s.version <= last) return;
      last = s.version;
      stream.send('state', s, s.version);
    };
    for (const s of queued.splice(0)) push(s);
    return reply;
  });

  app.get('/ops/streams/overview', { exposeHeadRoute: false }, async (req, reply) => {
    // The listener is attached before the response is taken over (attaching may fail: a 500, not a broken stream).
    const to: { stream?: SseStream } = {};
    const { current, detach } = await hub.attach({
      transition: (t) => to.stream?.send('transition', t),
      overview: (o) => to.stream?.send('overview', o),
    });
    const s = openSse(req, reply, () => {
      detach();
      open.delete(s);
    });
    to.stream = s;
    open.add(s);
    s.send('overview', current);
    return reply;
  });

  return hub;
}
