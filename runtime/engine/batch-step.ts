/**
 * Several events for one actor applied in one transaction (ActorHost's mailbox): the pure
 * transitions run in order on the row, each event gets the result it would have had alone
 * (applied at its own version, ignored, or a duplicate), and one statement writes them all
 * (batch-statement.ts). Only events that need nothing but the row and the dedupe table come
 * here: no creates (they may find no row), no timer firings (their generation is read first),
 * no caller's companion rows.
 */
import type { DurableMachine, EventBase } from '../../machines/kit/durable.ts';
import { step } from '../../machines/kit/step.ts';
import type { Db, Queryable, SqlParam } from '../../storage/db.ts';
import type { ApplyResult } from './actor-types.ts';
import { batchStatement, type BatchParts } from './batch-statement.ts';
import { planEffects, type OutboxRow, type TimerRow } from './effect-plan.ts';
import { UnknownActorError, VersionConflictError } from './errors.ts';
import { resultOf } from './event-parts.ts';
import type { CachedActor } from './snapshot-cache.ts';

export type BatchEvent = EventBase & Record<string, unknown>;

/** What one statement writes for a batch, and what each event's caller gets. */
export interface BatchPlan {
  results: ApplyResult[];
  /** The row after the batch (the row itself when nothing was applied). */
  last: CachedActor;
  /** Null when there is nothing to write (every event a duplicate). */
  sql: string | null;
  params: SqlParam[];
}

/**
 * Steps `events` in order from `row`. `appliedBefore`: ids already applied to the actor (read
 * under the row lock), which are duplicates; on the optimistic path it is empty and the
 * statement itself refuses to write if any was.
 */
export function planBatch(def: DurableMachine, actorId: string, row: CachedActor, events: readonly BatchEvent[], appliedBefore: ReadonlySet<string>): BatchPlan {
  const { merchant, mode } = row;
  const owner = { merchant, mode };
  let cur = row;
  let json: string | undefined;
  const results: ApplyResult[] = [];
  // Each event id's dedupe row: its seq when applied, null when ignored.
  const seen = new Map<string, number | null>();
  const journal: unknown[] = [];
  const outbox: OutboxRow[] = [];
  const timers = new Map<string, TimerRow | null>();
  const at = (outcome: ApplyResult['outcome'], r: CachedActor, json?: string) => resultOf(outcome, def, actorId, r.version, r.state, r.snapshot, merchant, mode, json);
  for (const event of events) {
    if (appliedBefore.has(event.id) || typeof seen.get(event.id) === 'number') {
      results.push(at('duplicate', cur));
      continue;
    }
    const next = step(def, cur.snapshot, event);
    if (!next.accepted) {
      // Ignored before (here or in an earlier transaction) is still ignored, not a duplicate:
      // as the locked path answers an event its dedupe row names as ignored.
      seen.set(event.id, null);
      results.push(at('ignored', cur));
      continue;
    }
    const version = cur.version + 1;
    journal.push({ seq: version, event_id: event.id, event, state_before: cur.state, state_after: next.status, at: event.at });
    const plan = planEffects(def.kind, actorId, version, next.effects, owner, null);
    outbox.push(...plan.outbox);
    for (const name of plan.timerDeletes) timers.set(name, null);
    for (const t of plan.timerUpserts) timers.set(t.name, t);
    seen.set(event.id, version);
    cur = { version, state: next.status, snapshot: next.snapshot, merchant, mode };
    json = next.json;
    results.push(at('applied', cur, next.json));
  }
  const dedupe = [...seen].map(([event_id, seq]) => ({ event_id, outcome: seq === null ? 'ignored' : 'applied', seq }));
  const timerUpserts = [...timers.values()].filter((t): t is TimerRow => t !== null);
  const timerDeletes = [...timers].filter(([, t]) => t === null).map(([name]) => name);
  const parts: BatchParts = { applied: journal.length > 0, outbox: outbox.length > 0, timerDeletes: timerDeletes.length > 0, timerUpserts: timerUpserts.length > 0 };
  // The statement checks that none of the events it writes was applied meanwhile.
  const params: SqlParam[] = [actorId, [...seen.keys()], row.version, JSON.stringify(dedupe)];
  if (parts.applied) {
    params.push(journal.length, cur.version, cur.state, json!, JSON.stringify(journal));
    if (parts.outbox) params.push(JSON.stringify(outbox));
    if (parts.timerDeletes) params.push(timerDeletes);
    if (parts.timerUpserts) params.push(JSON.stringify(timerUpserts));
  }
  return { results, last: cur, sql: seen.size > 0 ? batchStatement(parts) : null, params };
}

const SELECT_LOCKED_WITH_APPLIED = `SELECT version, state, snapshot, merchant, mode,
    ARRAY(SELECT event_id FROM processed_events WHERE actor_id = $1 AND event_id = ANY($2::text[]) AND outcome = 'applied') AS applied
  FROM actors WHERE id = $1 FOR UPDATE`;

/**
 * Applies a batch: in one statement from the row this process last saw (`cached`), else under
 * the row lock in a transaction of two statements. Throws on any failure, having written
 * nothing; the caller then applies each event alone.
 */
export async function applyBatch(db: Db, def: DurableMachine, actorId: string, events: readonly BatchEvent[], cached: CachedActor | undefined): Promise<BatchPlan> {
  if (cached) {
    const plan = planBatch(def, actorId, cached, events, new Set());
    const r = await db.query<{ n: number }>(plan.sql!, plan.params);
    if (r.rows[0]?.n === 1) return plan;
  }
  return db.tx((q) => applyLocked(q, def, actorId, events));
}

async function applyLocked(q: Queryable, def: DurableMachine, actorId: string, events: readonly BatchEvent[]): Promise<BatchPlan> {
  const found = await q.query<CachedActor & { applied: string[] }>(SELECT_LOCKED_WITH_APPLIED, [actorId, events.map((e) => e.id)]);
  const row = found.rows[0];
  if (!row) throw new UnknownActorError(actorId);
  const { applied, ...actor } = row;
  const plan = planBatch(def, actorId, actor, events, new Set(applied));
  if (plan.sql === null) return plan;
  const r = await q.query<{ n: number }>(plan.sql, plan.params);
  if (r.rows[0]?.n !== 1) throw new VersionConflictError(actorId);
  return plan;
}
