/**
 * The operator console's overview: actors by kind and state, the latest transitions, the
 * outbox and timer backlogs with their lag, webhook endpoints that are failing, and each
 * network's indexer head with its lag behind the node. A handful of aggregate queries, run
 * once per refresh for every open overview (gateway/ops/overview-hub.ts), never per stream.
 */
import type { Overview } from '../../machines/kit/console-view.ts';
import type { Db } from '../../storage/db.ts';

export type { Overview };

/** The node's current height per network, where the process can ask one. */
export type ChainTips = Record<string, () => Promise<number>>;

const iso = (v: unknown): string => (v instanceof Date ? v.toISOString() : String(v));
const num = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

export async function readOverview(db: Db, tips: ChainTips = {}, recentLimit = 20): Promise<Overview> {
  const [actors, recent, outbox, timers, webhooks, cursors] = await Promise.all([
    db.query<{ kind: string; state: string; count: string }>(`SELECT kind, state, count(*) AS count FROM actors GROUP BY kind, state ORDER BY kind, state`),
    // The journal's newest rows: by time, over the primary key's actor order there is no index, so
    // take the newest per recently updated actor (actors are updated in the same statement).
    db.query<{ actor_id: string; kind: string; seq: number; event: { type?: string }; state_before: string | null; state_after: string; at: unknown }>(
      `SELECT e.actor_id, a.kind, e.seq, e.event, e.state_before, e.state_after, e.at
         FROM (SELECT id, kind, version FROM actors ORDER BY updated_at DESC LIMIT $1) a
         JOIN actor_events e ON e.actor_id = a.id AND e.seq = a.version
        ORDER BY e.at DESC, e.actor_id`,
      [recentLimit],
    ),
    db.query<{ pending: string; oldest: unknown }>(`SELECT count(*) AS pending, extract(epoch FROM now() - min(created_at)) * 1000 AS oldest FROM outbox WHERE published_at IS NULL`),
    db.query<{ due: string; pending: string; oldest: unknown }>(
      `SELECT count(*) FILTER (WHERE fire_at <= now()) AS due, count(*) AS pending,
              extract(epoch FROM now() - min(fire_at) FILTER (WHERE fire_at <= now())) * 1000 AS oldest
         FROM timers WHERE fired_at IS NULL`,
    ),
    db.query<{ endpoint: string; merchant: string; mode: string; url: string; status: string; failing: string; last_error: string | null; last_status: number | null }>(
      `SELECT e.id AS endpoint, e.merchant, e.mode, e.url, e.status, count(d.id) AS failing,
              (array_agg(d.last_error ORDER BY d.updated_at DESC))[1] AS last_error,
              (array_agg(d.last_status ORDER BY d.updated_at DESC))[1] AS last_status
         FROM webhook_endpoints e
         JOIN webhook_deliveries d ON d.endpoint = e.id AND (d.status IN ('failed', 'disabled') OR (d.status = 'pending' AND d.attempts > 0))
        GROUP BY e.id ORDER BY failing DESC, e.id LIMIT 20`,
    ),
    db.query<{ network: string; height: number; updated_at: unknown }>(`SELECT network, height, updated_at FROM chain_cursor ORDER BY network`),
  ]);
  const indexers = await Promise.all(
    cursors.rows.map(async (c) => {
      const tip = tips[c.network];
      const nodeHeight = tip ? await tip().catch(() => null) : null;
      return { network: c.network, height: c.height, updated_at: iso(c.updated_at), node_height: nodeHeight, lag_blocks: nodeHeight === null ? null : Math.max(0, nodeHeight - c.height) };
    }),
  );
  return {
    at: new Date().toISOString(),
    actors: actors.rows.map((r) => ({ kind: r.kind, state: r.state, count: Number(r.count) })),
    recent: recent.rows.map((r) => ({ actor_id: r.actor_id, kind: r.kind, seq: r.seq, type: r.event.type ?? '?', state_before: r.state_before, state_after: r.state_after, at: iso(r.at) })),
    outbox: { pending: Number(outbox.rows[0]?.pending ?? 0), oldest_lag_ms: num(outbox.rows[0]?.oldest) },
    timers: { due: Number(timers.rows[0]?.due ?? 0), pending: Number(timers.rows[0]?.pending ?? 0), oldest_due_lag_ms: num(timers.rows[0]?.oldest) },
    webhooks: webhooks.rows.map((w) => ({ ...w, failing: Number(w.failing) })),
    indexers,
  };
}
