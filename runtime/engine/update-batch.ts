/**
 * The optimistic path's writes (ActorHost's `applyFromCache`) for different actors, of one
 * statement shape, submitted in the same event-loop turn: written in one statement (ADR 0090),
 * as creates are (ADR 0089). A purchase's `VERIFIED` write waits for its commit's WAL flush;
 * written together, the purchases read in one poll phase share one flush, one round trip and
 * one executor start.
 *
 * Each actor's version and dedupe are checked on their own: an actor whose row moved on is not
 * written, and nothing else of its event is (its journal, effects and companion rows are
 * gated by the dedupe rows actually written); its caller goes to the locked path, as when its
 * own statement writes nothing. A companion's guard whose batch form decides it per event
 * (ADR 0094: a routed execution's fee leg checked or settled on the simulated ledger) is read
 * before any actor is written: an event whose guard fails is not written, and is sent alone
 * after the statement, where its own statement refuses it as it would have alone. A failed
 * statement (a companion's unique key taken, a deadlock, a guard's `sure` condition) wrote
 * nothing, and each write is sent alone. A batch of one is the write's own statement
 * (write-statement.ts `fast`), unchanged.
 */
import type { Db, SqlParam } from '../../storage/db.ts';
import type { CreateCompanion } from './actor-types.ts';
import { batchable, companionRows } from './companions.ts';
import { runWrite, type PlannedWrite } from './event-write.ts';
import { SEND_ALONE, TurnBatcher, STATEMENTS_IN_FLIGHT } from './turn-batch.ts';
import { batchEffectCtes, batchEffectParams } from './batch-effects.ts';
import { memoStatements, type WriteParts } from './write-statement.ts';

/** Optimistic writes in one statement at most: the statement's parameters grow with it, and a failed batch is retried one by one. */
export const MAX_UPDATE_BATCH = 64;

type Parts = Pick<WriteParts, 'asyncCommit' | 'outbox' | 'timerDeletes' | 'timerUpserts'> & { companions: ReadonlyArray<Pick<CreateCompanion, 'name' | 'batch'>> };

/** `max`: writes per statement at most; 1 writes each alone. The answer: whether the row was written (false: it moved on, nothing written). */
export function updateBatcher(db: Db, max = MAX_UPDATE_BATCH): TurnBatcher<PlannedWrite, boolean> {
  return new TurnBatcher({
    max,
    inFlight: STATEMENTS_IN_FLIGHT,
    // A companion without a batch form, or with a guard (a condition on one event's rows) the batch cannot decide per event, is written alone.
    groupOf: (w) => (w.companions.every(batchable) ? batchKey(partsOf(w)) : null),
    distinct: (w) => w.target.id,
    alone: async (w) => (await runWrite(db, w)).rows[0]?.n === 1,
    together: async (ws) => {
      // Rows in id order: the plan locks the actors in the array's order, so two batches (two
      // processes, or two shapes in one) over the same actors take their locks in one order
      // rather than deadlocking (each then waiting deadlock_timeout before its one-by-one retry).
      const byId = [...ws].sort((a, b) => (a.target.id < b.target.id ? -1 : a.target.id > b.target.id ? 1 : 0));
      const r = await db.query<{ written: string[] | null; refused?: string[] | null }>(batchStatement(partsOf(ws[0]!)), batchParams(byId));
      const written = new Set(r.rows[0]?.written ?? []);
      // An event whose companion's guard failed is left out: alone, its own statement refuses it (or finds its row moved on).
      const refused = new Set(r.rows[0]?.refused ?? []);
      return ws.map((w) => (refused.has(w.target.id) ? SEND_ALONE : written.has(w.target.id)));
    },
  });
}

function partsOf(w: PlannedWrite): Parts {
  const p = w.parts;
  return { asyncCommit: !!p.asyncCommit, outbox: p.outbox, timerDeletes: p.timerDeletes, timerUpserts: p.timerUpserts, companions: w.companions };
}

const batchKey = (p: Parts) => `${+!!p.asyncCommit}${+p.outbox}${+p.timerDeletes}${+p.timerUpserts}${p.companions.map((c) => c.name).join(',')}`;

/** Rows whose actor's event is applied (`pe` returns their actor ids). */
const applied = (alias: string) => `${alias}.actor_id IN (SELECT actor_id FROM pe)`;

/**
 * Parameters: $1 the events (JSON: id, event_id, version, event, state_before, state_after,
 * at in ms, snapshot); then, only when present: outbox rows JSON, timer deletes JSON (actor_id,
 * name), timer rows JSON (each row with its actor_id); then the companions' JSON arrays.
 */
const batchStatement = memoStatements<Parts>(batchKey, (p) => {
  const effects = batchEffectCtes(p, 1, true, applied);
  // Each companion's first parameter, after the effects'.
  const firsts: number[] = [];
  let n = effects.n;
  for (const c of p.companions) {
    firsts.push(n + 1);
    n += c.batch!.arity ?? 1;
  }
  const guards = p.companions.flatMap((c, i) => (c.batch!.guard ? [{ ...c.batch!.guard, first: firsts[i]! }] : []));
  const checks = guards.flatMap((g) => (g.holds ? [g.holds('x')] : []));
  const holds = checks.map((c) => `\n               AND ${c}`).join('');
  const ctes = [
    `ev AS (SELECT * FROM jsonb_to_recordset($1::jsonb) AS ev(id text, event_id text, version integer, event jsonb, state_before text, state_after text, at double precision, snapshot jsonb))`,
    // The companions' guards, decided for each event before anything is written (ADR 0094).
    ...guards.flatMap((g) => (g.cte ? [g.cte(g.first)] : [])),
    // Each actor's own checks, as the statement of one write makes them.
    `up AS (UPDATE actors a SET snapshot = x.snapshot, state = x.state_after, version = x.version, updated_at = now()
              FROM ev x
             WHERE a.id = x.id AND a.version = x.version - 1
               AND NOT EXISTS (SELECT 1 FROM processed_events e WHERE e.actor_id = x.id AND e.event_id = x.event_id AND e.outcome = 'applied')${holds}
            RETURNING a.id)`,
    `pe AS (INSERT INTO processed_events (actor_id, event_id, outcome, seq)
            SELECT x.id, x.event_id, 'applied', x.version FROM ev x WHERE x.id IN (SELECT id FROM up)
              ON CONFLICT (actor_id, event_id) DO UPDATE SET outcome = 'applied', seq = EXCLUDED.seq, at = now()
               WHERE processed_events.outcome = 'ignored' RETURNING actor_id)`,
    `j AS (INSERT INTO actor_events (actor_id, seq, event_id, event, state_before, state_after, at)
           SELECT x.id, x.version, x.event_id, x.event, x.state_before, x.state_after, to_timestamp(x.at / 1000) FROM ev x WHERE x.id IN (SELECT actor_id FROM pe))`,
  ];
  ctes.push(...effects.ctes);
  for (const [i, c] of p.companions.entries()) {
    const cte = c.batch!.cte?.(firsts[i]!, 'pe');
    if (cte) ctes.push(cte);
  }
  // An update without its dedupe row would be a snapshot with no journal entry: the checks in
  // `up` make it impossible; should it ever happen, the division fails the statement.
  let tail = `SELECT (SELECT array_agg(id) FROM up) AS written, 1 / ((SELECT count(*) FROM pe) = (SELECT count(*) FROM up))::int AS guard`;
  if (checks.length > 0) tail += `,\n  (SELECT array_agg(x.id) FROM ev x WHERE NOT (${checks.join(' AND ')})) AS refused`;
  // What only the writes could tell (a balance that moved while its lock was awaited) fails the statement whole.
  const sure = guards.flatMap((g) => (g.sure ? [g.sure(g.first)] : []));
  if (sure.length > 0) tail += `,\n  1 / (${sure.join(' AND ')})::int AS sure`;
  // Read at commit, after the statement: the setting holds for this transaction alone.
  if (p.asyncCommit) tail += `, (SELECT set_config('synchronous_commit', 'off', true)) AS async`;
  return `WITH ${ctes.join(',\n')}\n${tail}`;
});

/** The JSON parameters, put together from the texts the step already encoded (no snapshot or event is encoded twice). */
function batchParams(ws: PlannedWrite[]): SqlParam[] {
  const j = JSON.stringify;
  const first = ws[0]!;
  const events = ws.map((w) => `{"id":${j(w.target.id)},"event_id":${j(w.event.id)},"version":${w.version},"event":${w.eventJson},"state_before":${j(w.stateBefore)},"state_after":${j(w.next.status)},"at":${j(w.event.at)},"snapshot":${w.next.json}}`);
  const params: SqlParam[] = [`[${events.join(',')}]`];
  params.push(...batchEffectParams(first.parts, ws.map((w) => ({ id: w.target.id, effects: w.effects }))));
  for (const [i, c] of first.companions.entries()) params.push(...companionRows(c, ws.map((w) => [w.companions[i]!, w.result])));
  return params;
}
