/**
 * An accepted event's write in one statement (write-statement.ts), planned before it is sent:
 * the step is pure, so the result is known first, and an optimistic write may be sent alone or
 * with others of its shape (update-batch.ts).
 */
import type { DurableMachine, EventBase } from '../../machines/kit/durable.ts';
import type { Accepted } from '../../machines/kit/step.ts';
import type { Queryable, QueryResult, SqlParam } from '../../storage/db.ts';
import type { ActorTarget, ApplyResult, CreateCompanion } from './actor-types.ts';
import { companionRefused } from './companions.ts';
import { planEffects, type EffectPlan } from './effect-plan.ts';
import { CompanionRefusedError } from './errors.ts';
import { resultOf, timerEventName } from './event-parts.ts';
import type { MachineRegistry } from './registry.ts';
import { writeStatement, type WriteParts } from './write-statement.ts';

/** How the row is written: inserted (a create on the locked path), updated under its lock, or from a cached row. */
export type WriteHow = 'insert' | 'update' | 'fast';

export interface PlannedWrite {
  target: ActorTarget;
  event: EventBase & Record<string, unknown>;
  eventJson: string;
  version: number;
  stateBefore: string | null;
  next: Accepted;
  effects: EffectPlan;
  parts: WriteParts;
  /** The machine's registration's (on insert), then the caller's. */
  companions: CreateCompanion[];
  /** The caller's own companion, if any. */
  companion: CreateCompanion | undefined;
  /** What applying the event gives. */
  result: ApplyResult;
}

/** The event's write: its statement's parts and parameters, and the result it gives once applied. */
export function planWrite(
  registry: MachineRegistry,
  how: WriteHow,
  def: DurableMachine,
  target: ActorTarget,
  event: EventBase & Record<string, unknown>,
  at: { version: number; stateBefore: string | null; merchant: string | null; mode: string | null },
  next: Accepted,
  companion?: CreateCompanion,
): PlannedWrite {
  const { version, stateBefore, merchant, mode } = at;
  const effects = planEffects(def.kind, target.id, version, next.effects, { merchant, mode }, timerEventName(event));
  const parts: WriteParts = { update: how === 'update', fast: how === 'fast', asyncCommit: how !== 'insert' && registry.asyncEvent(def.kind, event.type), outbox: effects.outbox.length > 0, timerDeletes: effects.timerDeletes.length > 0, timerUpserts: effects.timerUpserts.length > 0 };
  const result = resultOf('applied', def, target.id, version, next.status, next.snapshot, merchant, mode, next.json);
  // An actor inserted on the locked path (after a lost race) gets its machine's rows too.
  const companions = [how === 'insert' ? registry.companion(def.kind) : undefined, companion].filter((c): c is CreateCompanion => c !== undefined);
  if (companions.length > 0) parts.companions = companions;
  return { target, event, eventJson: JSON.stringify(event), version, stateBefore, next, effects, parts, companions, companion, result };
}

/**
 * The parameters of the write's own statement (write-statement.ts), made only when it is sent
 * alone: a write sent with others of its shape takes the batch statement's (update-batch.ts).
 */
function writeParams(w: PlannedWrite): SqlParam[] {
  const { target, event, parts, effects } = w;
  const params: SqlParam[] = [target.id, event.id, w.version, w.eventJson, w.stateBefore, w.next.status, event.at];
  if (parts.outbox) params.push(JSON.stringify(effects.outbox));
  if (parts.timerDeletes) params.push(effects.timerDeletes);
  if (parts.timerUpserts) params.push(JSON.stringify(effects.timerUpserts));
  if (parts.update || parts.fast) params.push(w.next.json);
  for (const c of w.companions) params.push(...c.params(w.result));
  return params;
}

/** Sends the write's own statement; a refused companion is `CompanionRefusedError`. */
export async function runWrite(q: Queryable, w: PlannedWrite): Promise<QueryResult<Record<string, unknown>>> {
  try {
    return await q.query(writeStatement(w.parts), writeParams(w));
  } catch (err) {
    if (w.companion && companionRefused(w.companion, err)) throw new CompanionRefusedError(w.target.id, w.companion.name);
    throw err;
  }
}
