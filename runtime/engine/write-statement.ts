/**
 * The one statement that writes an accepted event: dedupe row, journal row, outbox rows, timer
 * rows and the snapshot with its version, in one round trip. Only the parts an event needs
 * are included (most events write no outbox or timer rows); each variant is a prepared
 * statement of its own.
 *
 * Parameters: $1 actor id, $2 event id, $3 new version, $4 event JSON, $5 state before,
 * $6 state after, $7 event time (ms); then, in this order and only when present: (create)
 * $8 kind, $9 merchant, $10 mode, $11 machine version, $12 snapshot; outbox JSON; timer names
 * to delete; timer rows JSON; (update, fast) the snapshot; the companions' parameters.
 */
import type { CreateCompanion } from './actor-types.ts';

export interface WriteParts {
  /** Inserts the actor row too (a new actor in one statement). */
  create?: boolean;
  /** Commits without waiting for the WAL flush (`CreateOptions.asyncCommit`, `asyncEvents`). */
  asyncCommit?: boolean;
  /** Updates the snapshot of a row locked earlier in the transaction (the locked path). */
  update?: boolean;
  /**
   * Updates the snapshot from a cached row without a prior lock (the optimistic path): the
   * update takes the row lock itself, checks the version and that the event was never
   * applied, and gates every other write. Zero rows updated: nothing written, reload.
   */
  fast?: boolean;
  outbox: boolean;
  timerDeletes: boolean;
  timerUpserts: boolean;
  /**
   * Rows written with the event (`CreateCompanion`: with a new actor the machine's own, then
   * a caller's); their parameters come last, in this order.
   */
  companions?: ReadonlyArray<Pick<CreateCompanion, 'name' | 'arity' | 'cte' | 'guard'>>;
}

/** The marker in the error of a statement whose companion guard failed. */
export const COMPANION_REFUSED = 'companion refused';

/**
 * A statement's text built once per shape: the shapes are few (which parts are present), and the
 * same text lets the driver reuse its prepared statement.
 */
export function memoStatements<P>(keyOf: (p: P) => string, build: (p: P) => string): (p: P) => string {
  const statements = new Map<string, string>();
  return (p) => {
    const key = keyOf(p);
    let sql = statements.get(key);
    if (sql === undefined) statements.set(key, (sql = build(p)));
    return sql;
  };
}

export const writeStatement = memoStatements<WriteParts>(
  (p) => `${+!!p.create}${+!!p.asyncCommit}${+!!p.update}${+!!p.fast}${+p.outbox}${+p.timerDeletes}${+p.timerUpserts}${p.companions?.map((c) => c.name).join(',') ?? ''}`,
  build,
);

function build(p: WriteParts): string {
  let n = p.create ? 12 : 7;
  const ctes: string[] = [];
  // The snapshot is the last parameter of the update variants.
  const snapshotParam = n + +p.outbox + +p.timerDeletes + +p.timerUpserts + 1;
  if (p.create) {
    // A plain insert: an existing actor fails the statement on `actors_pkey` (the caller tells
    // that error from others), which a repeated create rarely meets; `ON CONFLICT DO NOTHING`
    // would insert speculatively on every create (an index probe first, then a confirmation).
    ctes.push(
      `a AS (INSERT INTO actors (id, kind, merchant, mode, machine, machine_version, state, snapshot, version)
            VALUES ($1, $8, $9, $10, $8, $11, $6, $12::jsonb, 1) RETURNING 1)`,
      // A new actor's row is its create's dedupe (its id is unique): no processed_events row.
      // A repeated create is found by the journal's first entry (ActorHost's locked path).
      `pe AS (SELECT 1 FROM a)`,
    );
  } else if (p.fast) {
    ctes.push(`up AS (UPDATE actors SET snapshot = $${snapshotParam}::jsonb, state = $6, version = $3, updated_at = now()
            WHERE id = $1 AND version = $3 - 1
              AND NOT EXISTS (SELECT 1 FROM processed_events WHERE actor_id = $1 AND event_id = $2 AND outcome = 'applied')
            RETURNING 1)`);
    ctes.push(dedupe('WHERE EXISTS (SELECT 1 FROM up)'));
  } else {
    ctes.push(dedupe(''));
  }
  ctes.push(`j AS (INSERT INTO actor_events (actor_id, seq, event_id, event, state_before, state_after, at)
           SELECT $1, $3, $2, $4::jsonb, $5, $6, to_timestamp($7::double precision / 1000) WHERE EXISTS (SELECT 1 FROM pe))`);
  const effects = effectCtes(p, n, 'pe', !p.create);
  ctes.push(...effects.ctes);
  n = effects.n;
  // The update variants' snapshot parameter comes before the companions'.
  if (p.update || p.fast) n = snapshotParam;
  const guards: string[] = [];
  for (const c of p.companions ?? []) {
    ctes.push(c.cte(n + 1));
    if (c.guard) guards.push(c.guard(n + 1));
    n += c.arity;
  }
  // `pe` and `up` write one row of one actor at most, so a row's presence is their count: read
  // without an aggregate, whose node costs more to start than the scan it counts.
  let tail = `SELECT ${oneOrNone('pe')} AS fresh, 1 AS n`;
  if (p.update) {
    ctes.push(`up AS (UPDATE actors SET snapshot = $${snapshotParam}::jsonb, state = $6, version = $3, updated_at = now()
            WHERE id = $1 AND version = $3 - 1 AND EXISTS (SELECT 1 FROM pe) RETURNING 1)`);
    tail = `SELECT ${oneOrNone('pe')} AS fresh, ${oneOrNone('up')} AS n`;
  }
  if (p.fast) {
    // An update without its dedupe row would be a snapshot with no journal entry. The version
    // check makes it impossible; should it ever happen, the division fails the statement and
    // nothing of it is written.
    tail = `SELECT ${oneOrNone('pe')} AS fresh, ${oneOrNone('up')} AS n,
      CASE WHEN EXISTS (SELECT 1 FROM up) THEN 1 / ${oneOrNone('pe')} ELSE 0 END AS guard`;
  }
  // Read at commit, after the statement: the setting holds for this transaction alone.
  if (p.asyncCommit) tail += `, (SELECT set_config('synchronous_commit', 'off', true)) AS async`;
  for (const g of guards) {
    // A guard that fails on an applied event fails the statement, so nothing of it is written.
    // The cast of a marker text is the error (ActorHost recognises COMPANION_REFUSED in it); the
    // CASE is not constant, so the planner cannot fold it into an error of its own.
    tail += `,\n      (CASE WHEN EXISTS (SELECT 1 FROM pe) AND NOT (${g}) THEN '${COMPANION_REFUSED}' ELSE '0' END)::int AS companion_guard`;
  }
  return `WITH ${ctes.join(',\n')}\n${tail}`;
}

/** 1 if the single-row CTE `cte` wrote its row, else 0. */
function oneOrNone(cte: string): string {
  return `coalesce((SELECT 1 FROM ${cte}), 0)`;
}

function dedupe(where: string): string {
  // An event seen before but not accepted then ('ignored') may be accepted now: reordered
  // deliveries must not lose a fact. Only an 'applied' row makes it a duplicate.
  return `pe AS (INSERT INTO processed_events (actor_id, event_id, outcome, seq) SELECT $1, $2, 'applied', $3 ${where}
              ON CONFLICT (actor_id, event_id) DO UPDATE SET outcome = 'applied', seq = EXCLUDED.seq, at = now()
               WHERE processed_events.outcome = 'ignored' RETURNING 1)`;
}

/** A timer row replacing the actor's timer of that name: rescheduled, not yet fired. */
export const TIMER_UPSERT = `
           ON CONFLICT (actor_id, name) DO UPDATE
             SET kind = EXCLUDED.kind, event_type = EXCLUDED.event_type, fire_at = EXCLUDED.fire_at, generation = EXCLUDED.generation, fired_at = NULL`;

/**
 * The outbox and timer CTEs of a write, each writing only if the CTE `gate` has a row; their
 * parameters follow `$n` in this order: outbox JSON, timer names to delete, timer rows JSON.
 * `upsert`: timer rows may exist already (a new actor has none: a plain insert, without the
 * speculative insertion an upsert costs). Returns the last parameter number used.
 */
export function effectCtes(p: Pick<WriteParts, 'outbox' | 'timerDeletes' | 'timerUpserts'>, n: number, gate: string, upsert: boolean): { ctes: string[]; n: number } {
  const ctes: string[] = [];
  const when = `EXISTS (SELECT 1 FROM ${gate})`;
  if (p.outbox) {
    ctes.push(`ob AS (INSERT INTO outbox (actor_id, msg_id, subject, payload)
           SELECT $1, x.msg_id, x.subject, x.payload FROM jsonb_to_recordset($${++n}::jsonb) AS x(msg_id text, subject text, payload jsonb)
            WHERE ${when})`);
  }
  if (p.timerDeletes) ctes.push(`td AS (DELETE FROM timers WHERE actor_id = $1 AND name = ANY($${++n}::text[]) AND ${when})`);
  if (p.timerUpserts) {
    ctes.push(`ti AS (INSERT INTO timers (actor_id, name, kind, event_type, fire_at, generation)
           SELECT $1, x.name, x.kind, x.event_type, x.fire_at, x.generation
             FROM jsonb_to_recordset($${++n}::jsonb) AS x(name text, kind text, event_type text, fire_at timestamptz, generation integer)
            WHERE ${when}${upsert ? TIMER_UPSERT : ''})`);
  }
  return { ctes, n };
}
