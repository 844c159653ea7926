/**
 * The console's JSON, behind an operator session: the overview, the actor list, one actor
 * (row, timers, outbox), its journal in pages, a machine's laid-out statechart, and verify
 * (a POST: it runs the replay on this process, so it takes the CSRF token like every write).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { activeStates } from '../../runtime/ops/graph.ts';
import { AppError, issuesMessage } from '../errors.ts';
import { sendJson } from '../http/reply.ts';
import type { OpsConsoleDeps } from './deps.ts';

const text = (max: number) => z.string().min(1).max(max).optional();
const ActorQuery = z.strictObject({
  kind: text(64),
  state: text(64),
  merchant: text(128),
  prefix: text(128),
  after: text(256),
  limit: z.coerce.number().int().min(1).max(200).default(50),
});
const JournalQuery = z.strictObject({
  before: z.coerce.number().int().min(1).max(2_147_483_647).optional(),
  limit: z.coerce.number().int().min(1).max(500).default(50),
});

export function parseQuery<T extends z.ZodType>(schema: T, req: FastifyRequest): z.infer<T> {
  const r = schema.safeParse(req.query ?? {});
  if (!r.success) throw new AppError('bad_request', issuesMessage(r.error.issues, 'query'));
  return r.data;
}

/** Everything the actor page shows at once: the row, its chart, timers, outbox and the first journal page. */
export async function actorView(d: OpsConsoleDeps, id: string) {
  const c = d.console;
  const row = await c.actors.get(id);
  if (!row) return null;
  const [graph, journal, timers, outbox] = await Promise.all([c.layout(row.kind), c.actors.journal(id, { limit: 50 }), c.actors.timers(id), c.actors.outbox(id)]);
  return { actor: { ...row, active: activeStates(row.snapshot.value) }, graph, journal, timers, outbox };
}

export function opsData(app: FastifyInstance, d: OpsConsoleDeps): void {
  app.get('/ops/data/overview', async (_req, reply) => {
    sendJson(reply, 200, await d.console.overview());
    return reply;
  });

  app.get('/ops/data/actors', async (req, reply) => {
    const q = parseQuery(ActorQuery, req);
    const page = await d.console.actors.list({ kind: q.kind, state: q.state, merchant: q.merchant, idPrefix: q.prefix, after: q.after, limit: q.limit });
    sendJson(reply, 200, page);
    return reply;
  });

  app.get<{ Params: { id: string } }>('/ops/data/actors/:id', async (req, reply) => {
    const view = await actorView(d, req.params.id);
    if (!view) throw new AppError('not_found', 'No such actor.');
    sendJson(reply, 200, view);
    return reply;
  });

  app.get<{ Params: { id: string } }>('/ops/data/actors/:id/journal', async (req, reply) => {
    const q = parseQuery(JournalQuery, req);
    sendJson(reply, 200, await d.console.actors.journal(req.params.id, { before: q.before, limit: q.limit }));
    return reply;
  });

  app.get<{ Params: { kind: string } }>('/ops/data/machines/:kind', async (req, reply) => {
    const g = await d.console.layout(req.params.kind);
    if (!g) throw new AppError('not_found', 'No machine of this kind.');
    sendJson(reply, 200, g);
    return reply;
  });

  app.post<{ Params: { id: string } }>('/ops/data/actors/:id/verify', async (req, reply) => {
    const r = await d.console.verify(req.params.id);
    if (!r) throw new AppError('not_found', 'No such actor.');
    sendJson(reply, 200, r);
    return reply;
  });
}
