/** A new actor in one statement (ActorHost's create path): actor row, journal, outbox, timers, companions. */
import type { DurableMachine, EventBase } from '../../machines/kit/durable.ts';
import { create } from '../../machines/kit/step.ts';
import type { Db, SqlParam } from '../../storage/db.ts';
import type { ActorTarget, ApplyResult, CreateCompanion } from './actor-types.ts';
import { planEffects } from './effect-plan.ts';
import { violatesUnique } from './companions.ts';
import { ownerOf, resultOf } from './event-parts.ts';
import type { MachineRegistry } from './registry.ts';
import { writeStatement, type WriteParts } from './write-statement.ts';

/** The actors table's primary key (storage/migrations/0001_engine.sql). */
const ACTORS_KEY = 'actors_pkey';

/**
 * A new actor in one statement, hence one implicit transaction and one round trip: actor row,
 * dedupe, journal, outbox and timers. Null when the actor already exists (nothing written).
 */
export async function createInOneStatement(db: Db, registry: MachineRegistry, def: DurableMachine, target: ActorTarget, event: EventBase & Record<string, unknown>, companion?: CreateCompanion): Promise<ApplyResult | null> {
  const created = create(def, event);
  const { merchant, mode } = ownerOf(target, event);
  const { outbox, timerUpserts, timerDeletes } = planEffects(def.kind, target.id, 1, created.effects, { merchant, mode }, null);
  const parts: WriteParts = { create: true, asyncCommit: registry.asyncCreate(def.kind), update: false, outbox: outbox.length > 0, timerDeletes: timerDeletes.length > 0, timerUpserts: timerUpserts.length > 0 };
  const companions = [registry.companion(def.kind), companion].filter((c): c is CreateCompanion => c !== undefined);
  if (companions.length > 0) parts.companions = companions;
  const params: SqlParam[] = [target.id, event.id, 1, JSON.stringify(event), null, created.status, event.at, def.kind, merchant, mode, def.version, created.json];
  if (parts.outbox) params.push(JSON.stringify(outbox));
  if (parts.timerDeletes) params.push(timerDeletes);
  if (parts.timerUpserts) params.push(JSON.stringify(timerUpserts));
  // The result is known before the write (the step is pure), so a companion can render it.
  const result = resultOf('applied', def, target.id, 1, created.status, created.snapshot, merchant, mode, created.json);
  for (const c of companions) params.push(...c.params(result));
  try {
    await db.query(writeStatement(parts), params);
  } catch (err) {
    // The actor exists: nothing of the statement was written.
    if (violatesUnique(err, [ACTORS_KEY])) return null;
    throw err;
  }
  if (companion) result.companionWritten = true;
  return result;
}
