/**
 * The outbox and timer rows of several actors' writes in one statement (create-batch.ts,
 * update-batch.ts): one JSON array parameter per kind of row, each row naming its actor, read
 * with `jsonb_to_recordset`.
 */
import type { SqlParam } from '../../storage/db.ts';
import { ownedRowJson, type EffectPlan } from './effect-plan.ts';
import { TIMER_UPSERT } from './write-statement.ts';

export interface BatchEffectParts {
  outbox: boolean;
  timerDeletes: boolean;
  timerUpserts: boolean;
}

/**
 * The CTEs writing the rows, their parameters following `$n` (outbox, timer deletes, timer
 * rows, each only when present). `applied(alias)`: the condition a row's actor was written
 * (none: every actor of the batch is). `upsert`: timer rows may exist already (a new actor has none).
 */
export function batchEffectCtes(p: BatchEffectParts, n: number, upsert: boolean, applied?: (alias: string) => string): { ctes: string[]; n: number } {
  const ctes: string[] = [];
  const where = (alias: string) => (applied ? `\n            WHERE ${applied(alias)}` : '');
  if (p.outbox) {
    ctes.push(`ob AS (INSERT INTO outbox (actor_id, msg_id, subject, payload)
           SELECT o.actor_id, o.msg_id, o.subject, o.payload FROM jsonb_to_recordset($${++n}::jsonb) AS o(actor_id text, msg_id text, subject text, payload jsonb)${where('o')})`);
  }
  if (p.timerDeletes) {
    ctes.push(`td AS (DELETE FROM timers t USING jsonb_to_recordset($${++n}::jsonb) AS d(actor_id text, name text)
            WHERE t.actor_id = d.actor_id AND t.name = d.name${applied ? ` AND ${applied('d')}` : ''})`);
  }
  if (p.timerUpserts) {
    ctes.push(`ti AS (INSERT INTO timers (actor_id, name, kind, event_type, fire_at, generation)
           SELECT t.actor_id, t.name, t.kind, t.event_type, t.fire_at, t.generation
             FROM jsonb_to_recordset($${++n}::jsonb) AS t(actor_id text, name text, kind text, event_type text, fire_at timestamptz, generation integer)${where('t')}${upsert ? TIMER_UPSERT : ''})`);
  }
  return { ctes, n };
}

/** The parameters `batchEffectCtes` reads, in its order, from each actor's planned effects. */
export function batchEffectParams(p: BatchEffectParts, items: ReadonlyArray<{ id: string; effects: EffectPlan }>): SqlParam[] {
  const outbox: string[] = [];
  const deletes: string[] = [];
  const timers: string[] = [];
  for (const { id, effects } of items) {
    for (const o of effects.outbox) outbox.push(ownedRowJson(id, o));
    for (const name of effects.timerDeletes) deletes.push(`{"actor_id":${JSON.stringify(id)},"name":${JSON.stringify(name)}}`);
    for (const t of effects.timerUpserts) timers.push(ownedRowJson(id, t));
  }
  const params: SqlParam[] = [];
  if (p.outbox) params.push(`[${outbox.join(',')}]`);
  if (p.timerDeletes) params.push(`[${deletes.join(',')}]`);
  if (p.timerUpserts) params.push(`[${timers.join(',')}]`);
  return params;
}
