/** A new actor in one statement (ActorHost's create path): actor row, journal, outbox, timers, companions. */
import type { DurableMachine, EventBase } from '../../machines/kit/durable.ts';
import { create } from '../../machines/kit/step.ts';
import type { Db, SqlParam } from '../../storage/db.ts';
import type { ActorTarget, ApplyResult, CreateCompanion } from './actor-types.ts';
import { planEffects, type EffectPlan } from './effect-plan.ts';
import { violatesUnique } from './companions.ts';
import { ownerOf, resultOf } from './event-parts.ts';
import type { MachineRegistry } from './registry.ts';
import { writeStatement, type WriteParts } from './write-statement.ts';

/** The actors table's primary key (storage/migrations/0001_engine.sql). */
const ACTORS_KEY = 'actors_pkey';

/**
 * A create stepped and planned, not yet written: the step is pure, so the result is known
 * before the write, and the create may be written alone or with others (create-batch.ts).
 */
export interface PlannedCreate {
  def: DurableMachine;
  target: ActorTarget;
  event: EventBase & Record<string, unknown>;
  eventJson: string;
  snapshotJson: string;
  effects: EffectPlan;
  parts: WriteParts;
  /** The machine's registration's, then the caller's (`parts.companions`, in that order). */
  companions: CreateCompanion[];
  /** The caller's own companion, if any. */
  companion: CreateCompanion | undefined;
  result: ApplyResult;
}

export function planCreate(registry: MachineRegistry, def: DurableMachine, target: ActorTarget, event: EventBase & Record<string, unknown>, companion?: CreateCompanion): PlannedCreate {
  const created = create(def, event);
  const { merchant, mode } = ownerOf(target, event);
  const effects = planEffects(def.kind, target.id, 1, created.effects, { merchant, mode }, null);
  const parts: WriteParts = { create: true, asyncCommit: registry.asyncCreate(def.kind), update: false, outbox: effects.outbox.length > 0, timerDeletes: effects.timerDeletes.length > 0, timerUpserts: effects.timerUpserts.length > 0 };
  const companions = [registry.companion(def.kind), companion].filter((c): c is CreateCompanion => c !== undefined);
  if (companions.length > 0) parts.companions = companions;
  const result = resultOf('applied', def, target.id, 1, created.status, created.snapshot, merchant, mode, created.json);
  return { def, target, event, eventJson: JSON.stringify(event), snapshotJson: created.json, effects, parts, companions, companion, result };
}

/**
 * A new actor in one statement, hence one implicit transaction and one round trip: actor row,
 * dedupe, journal, outbox and timers. Null when the actor already exists (nothing written).
 */
export async function createInOneStatement(db: Db, registry: MachineRegistry, def: DurableMachine, target: ActorTarget, event: EventBase & Record<string, unknown>, companion?: CreateCompanion): Promise<ApplyResult | null> {
  return writeCreate(db, planCreate(registry, def, target, event, companion));
}

/** `createInOneStatement` of a create planned already. */
export async function writeCreate(db: Db, p: PlannedCreate): Promise<ApplyResult | null> {
  const { def, target, event, effects, result } = p;
  const params: SqlParam[] = [target.id, event.id, 1, p.eventJson, null, result.status, event.at, def.kind, result.merchant, result.mode, def.version, p.snapshotJson];
  if (p.parts.outbox) params.push(JSON.stringify(effects.outbox));
  if (p.parts.timerDeletes) params.push(effects.timerDeletes);
  if (p.parts.timerUpserts) params.push(JSON.stringify(effects.timerUpserts));
  // The result is known before the write (the step is pure), so a companion can render it.
  for (const c of p.companions) params.push(...c.params(result));
  try {
    await db.query(writeStatement(p.parts), params);
  } catch (err) {
    // The actor exists: nothing of the statement was written.
    if (violatesUnique(err, [ACTORS_KEY])) return null;
    throw err;
  }
  if (p.companion) result.companionWritten = true;
  return result;
}
