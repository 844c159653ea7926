/**
 * The step the model suites run, checked against the same step from the snapshot as the
 * database gives it back: a step on what an earlier step gave starts from the machine's own
 * snapshot (step.ts), which must lead exactly where a reload leads (same acceptance, status,
 * stored text and effects).
 */
import type { AnyStateMachine, EventFromLogic } from 'xstate';
import type { DurableMachine } from '../../machines/kit/durable.ts';
import { step, type PersistedSnapshot, type StepResult } from '../../machines/kit/step.ts';

export function stepChecked(def: DurableMachine, current: PersistedSnapshot, event: EventFromLogic<AnyStateMachine>): StepResult {
  const r = step(def, current, event);
  const reloaded = step(def, JSON.parse(JSON.stringify(current)) as PersistedSnapshot, event);
  const seen = (s: StepResult) => JSON.stringify([s.accepted, s.status, s.snapshot, s.effects, s.accepted ? s.json : null]);
  if (seen(r) !== seen(reloaded)) throw new Error(`${def.kind} ${(event as { type: string }).type}: the step from the kept snapshot differs from the step from the reloaded one`);
  return r;
}
