/**
 * Creates of one kind and one statement shape, submitted in the same event-loop turn, written
 * in one statement (ADR 0089): the requests read in one poll phase share one round trip, one
 * backend wake-up and one executor start instead of paying one each. Each actor's create is
 * still whole in one transaction with its journal, timers and outbox rows; several actors share
 * it. A batch of one is today's statement (create-statement.ts), unchanged.
 *
 * The batch statement fails or commits whole. When it fails (an actor that exists already fails
 * it on `actors_pkey`), nothing of it was written, and each create is written alone, so each
 * caller gets exactly what writing its create alone gives.
 */
import type { Db, SqlParam } from '../../storage/db.ts';
import type { ApplyResult, CreateCompanion } from './actor-types.ts';
import { TurnBatcher, STATEMENTS_IN_FLIGHT } from './turn-batch.ts';
import { writeCreate, type PlannedCreate } from './create-statement.ts';
import { batchEffectCtes, batchEffectParams } from './batch-effects.ts';
import { memoStatements } from './write-statement.ts';
import { companionRows } from './companions.ts';

/** Creates written together at most: the statement's parameters grow with it, and a failed batch is retried one by one. */
export const MAX_CREATE_BATCH = 64;

interface BatchParts {
  asyncCommit: boolean;
  outbox: boolean;
  timerUpserts: boolean;
  companions: ReadonlyArray<Pick<CreateCompanion, 'name' | 'batch'>>;
}

/** `max`: creates per statement at most; 1 writes each create alone, as it comes. Null from `write`: the actor exists, nothing written. */
export function createBatcher(db: Db, max = MAX_CREATE_BATCH): TurnBatcher<PlannedCreate, ApplyResult | null> {
  return new TurnBatcher({
    max,
    inFlight: STATEMENTS_IN_FLIGHT,
    groupOf,
    alone: (p) => writeCreate(db, p),
    together: async (plans) => {
      await db.query(batchStatement(partsOf(plans[0]!)), batchParams(plans));
      return plans.map((p) => p.result);
    },
  });
}

/**
 * The batch a create may join, null if it is written alone: one with the caller's own
 * companion (its result says whether that was written), timers to delete (a new actor has
 * none), or a companion without a batch form.
 */
function groupOf(p: PlannedCreate): string | null {
  // A guard is a condition on one create's rows, which the batch statement does not check.
  if (p.companion || p.parts.timerDeletes || p.companions.some((c) => !c.batch || c.guard !== undefined)) return null;
  return `${p.def.kind}:${batchKey(partsOf(p))}`;
}

function partsOf(p: PlannedCreate): BatchParts {
  return { asyncCommit: !!p.parts.asyncCommit, outbox: p.parts.outbox, timerUpserts: p.parts.timerUpserts, companions: p.companions };
}

const batchKey = (p: BatchParts) => `${+p.asyncCommit}${+p.outbox}${+p.timerUpserts}${p.companions.map((c) => c.name).join(',')}`;

/**
 * Parameters: $1 kind, $2 machine version, $3 the actors (JSON: id, merchant, mode, state,
 * snapshot, event_id, event, at in ms); then, only when present: outbox rows JSON, timer rows
 * JSON (each row with its actor_id), then one JSON array per companion.
 */
const batchStatement = memoStatements<BatchParts>(batchKey, (p) => {
  let n = 3;
  const ctes = [
    `x AS (SELECT * FROM jsonb_to_recordset($3::jsonb) AS x(id text, merchant text, mode text, state text, snapshot jsonb, event_id text, event jsonb, at double precision))`,
    // A new actor's row is its create's dedupe, as in the statement of one create.
    `a AS (INSERT INTO actors (id, kind, merchant, mode, machine, machine_version, state, snapshot, version)
            SELECT x.id, $1::text, x.merchant, x.mode, $1::text, $2::integer, x.state, x.snapshot, 1 FROM x)`,
    `j AS (INSERT INTO actor_events (actor_id, seq, event_id, event, state_before, state_after, at)
            SELECT x.id, 1, x.event_id, x.event, NULL, x.state, to_timestamp(x.at / 1000) FROM x)`,
  ];
  // Every actor of a create batch is written (it commits or fails whole); a new actor has no timers yet.
  const effects = batchEffectCtes({ ...p, timerDeletes: false }, n, false);
  ctes.push(...effects.ctes);
  n = effects.n;
  for (const c of p.companions) {
    const cte = c.batch!.cte?.(n + 1);
    if (cte) ctes.push(cte);
    n += c.batch!.arity ?? 1;
  }
  // Read at commit, after the statement: the setting holds for this transaction alone.
  return `WITH ${ctes.join(',\n')}\nSELECT ${p.asyncCommit ? `set_config('synchronous_commit', 'off', true)` : '1'} AS done`;
});

/** The JSON parameters, put together from the texts the step already encoded (no object is encoded twice). */
function batchParams(plans: PlannedCreate[]): SqlParam[] {
  const j = JSON.stringify;
  const first = plans[0]!;
  const actors = plans.map((p) => {
    const r = p.result;
    return `{"id":${j(p.target.id)},"merchant":${j(r.merchant)},"mode":${j(r.mode)},"state":${j(r.status)},"snapshot":${p.snapshotJson},"event_id":${j(p.event.id)},"event":${p.eventJson},"at":${j(p.event.at)}}`;
  });
  const params: SqlParam[] = [first.def.kind, first.def.version, `[${actors.join(',')}]`];
  params.push(...batchEffectParams({ ...first.parts, timerDeletes: false }, plans.map((p) => ({ id: p.target.id, effects: p.effects }))));
  for (const [i, c] of first.companions.entries()) params.push(...companionRows(c, plans.map((p) => [p.companions[i]!, p.result])));
  return params;
}
