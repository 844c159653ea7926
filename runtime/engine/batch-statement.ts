/**
 * The one statement that writes several events taken together for one actor (ActorHost's
 * mailbox): the snapshot as the last of them left it, a dedupe row per event (applied or
 * ignored), a journal row per applied event, and the outbox and net timer rows of them all.
 * Still one actor per statement (DESIGN §2).
 *
 * The snapshot is written only if the row still has the version the events were stepped from
 * and none of the events was ever applied; otherwise nothing is written (`n` = 0) and the
 * caller reads the row under its lock and steps again. With no event applied, the same checks
 * gate only the dedupe rows of the ignored ones.
 *
 * Parameters: $1 actor id, $2 every event id (text[]), $3 version stepped from, $4 dedupe rows
 * (JSON: event_id, outcome, seq); when some were applied, $5 how many, $6 version after, $7
 * state after, $8 snapshot after, $9 journal rows (JSON: seq, event_id, event, state_before,
 * state_after, at in ms), then, only when present: outbox JSON, timer names to delete, timer
 * rows JSON.
 */

import { effectCtes, memoStatements } from './write-statement.ts';

export interface BatchParts {
  /** At least one event was applied: the snapshot moves on. */
  applied: boolean;
  outbox: boolean;
  timerDeletes: boolean;
  timerUpserts: boolean;
}

export const batchStatement = memoStatements<BatchParts>(
  (p) => `${+p.applied}${+p.outbox}${+p.timerDeletes}${+p.timerUpserts}`,
  build,
);

function build(p: BatchParts): string {
  const unseen = `NOT EXISTS (SELECT 1 FROM processed_events WHERE actor_id = $1 AND event_id = ANY($2::text[]) AND outcome = 'applied')`;
  const ctes = [
    p.applied
      ? `up AS (UPDATE actors SET snapshot = $8::jsonb, state = $7, version = $6, updated_at = now()
            WHERE id = $1 AND version = $3 AND ${unseen} RETURNING 1)`
      : `up AS (SELECT 1 FROM actors WHERE id = $1 AND version = $3 AND ${unseen})`,
    // An event recorded as ignored before may be applied now (reordered deliveries); one
    // ignored again keeps its first row.
    `pe AS (INSERT INTO processed_events (actor_id, event_id, outcome, seq)
            SELECT $1, x.event_id, x.outcome, x.seq FROM jsonb_to_recordset($4::jsonb) AS x(event_id text, outcome text, seq integer)
             WHERE EXISTS (SELECT 1 FROM up)
            ON CONFLICT (actor_id, event_id) DO UPDATE SET outcome = 'applied', seq = EXCLUDED.seq, at = now()
             WHERE processed_events.outcome = 'ignored' AND EXCLUDED.outcome = 'applied' RETURNING outcome)`,
  ];
  // Nothing applied has no effects: the checks and the ignored events' rows are all there is.
  if (!p.applied) return `WITH ${ctes.join(',\n')}\nSELECT (SELECT count(*) FROM up)::int AS n, (SELECT count(*) FROM pe)::int AS recorded`;
  ctes.push(`j AS (INSERT INTO actor_events (actor_id, seq, event_id, event, state_before, state_after, at)
            SELECT $1, x.seq, x.event_id, x.event, x.state_before, x.state_after, to_timestamp(x.at / 1000)
              FROM jsonb_to_recordset($9::jsonb) AS x(seq integer, event_id text, event jsonb, state_before text, state_after text, at double precision)
             WHERE EXISTS (SELECT 1 FROM up))`);
  ctes.push(...effectCtes(p, 9, 'up', true).ctes);
  // A snapshot without a dedupe row for each applied event would be a journal that replays to
  // something else. The checks in `up` make it impossible; should it ever happen, the division
  // fails the statement and nothing of it is written.
  return `WITH ${ctes.join(',\n')}
SELECT (SELECT count(*) FROM up)::int AS n,
  CASE WHEN EXISTS (SELECT 1 FROM up) THEN 1 / ((SELECT count(*) FROM pe WHERE outcome = 'applied') = $5::int)::int ELSE 0 END AS guard`;
}
