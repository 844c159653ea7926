import { createActor, type AnyStateMachine, type ExecutableActionObject, type EventFromLogic, type SnapshotFrom } from 'xstate';
import type { DurableMachine, EventBase } from './durable.ts';
import { effectsOf, type EffectAction } from './effects.ts';
import { isJsonPlain } from './json-plain.ts';

export interface PersistedSnapshot {
  value: unknown;
  context: unknown;
  status?: string;
}

interface StepCommon {
  snapshot: PersistedSnapshot;
  status: string;
  effects: EffectAction[];
}

/** A new snapshot, with its JSON (the text the engine stores, made once). */
export interface Accepted extends StepCommon {
  accepted: true;
  json: string;
}

/** The current state does not accept the event: nothing changes. */
export interface NotAccepted extends StepCommon {
  accepted: false;
}

export type StepResult = Accepted | NotAccepted;

type MachineSnapshot = SnapshotFrom<AnyStateMachine>;

/**
 * The XState snapshot a persisted snapshot was made from, while the persisted one is the
 * machine's own objects (`persist`): the next step on it starts from there instead of resolving
 * the state value again. Held by the persisted object itself, under a key no JSON, spread or
 * comparison sees (not enumerable, a symbol), so any caller handing back what a step gave (the
 * host's cache, a replay) takes it, and a snapshot from anywhere else is restored.
 */
const MADE = Symbol('machine snapshot');

/** Machines whose snapshot a step may reuse: no parallel or history states (one atomic state, nothing remembered outside `value` and `context`). */
const reusable = new WeakMap<AnyStateMachine, boolean>();

function plainStates(machine: AnyStateMachine): boolean {
  let ok = reusable.get(machine);
  if (ok === undefined) {
    const walk = (n: { type: string; states: Record<string, unknown> }): boolean => n.type !== 'parallel' && n.type !== 'history' && Object.values(n.states).every((c) => walk(c as typeof n));
    reusable.set(machine, (ok = walk(machine.root)));
  }
  return ok;
}

function persist(def: DurableMachine, s: MachineSnapshot): { snapshot: PersistedSnapshot; json: string } {
  // Durable machines spawn nothing, use no history states and keep no actor references in
  // their context, so what XState's getPersistedSnapshot would add (a deep copy of the context,
  // children, history) is either empty or what the JSON below already does (its copy was
  // 1.6 % of the gateway's samples in a profile of creates). The snapshot is exactly what a
  // reload from the database gives (the model suites check it): the machine's own objects when
  // they are plain JSON already (a walk costs a fraction of parsing the text back), else the text parsed.
  const { status, value, context } = s as { status: string; value: unknown; context: unknown };
  const json = JSON.stringify({ status, value, context });
  if (!isJsonPlain(value) || !isJsonPlain(context)) return { snapshot: JSON.parse(json) as PersistedSnapshot, json };
  const snapshot: PersistedSnapshot = { status, value, context };
  if (status === 'active' && plainStates(def.machine)) Object.defineProperty(snapshot, MADE, { value: s });
  return { snapshot, json };
}

export function restore(def: DurableMachine, p: PersistedSnapshot): MachineSnapshot {
  const s = (p as { [MADE]?: MachineSnapshot })[MADE];
  // What `persist` kept, unless the persisted object was changed since or belongs to another machine.
  if (s !== undefined && s.machine === def.machine && (s as { value: unknown }).value === p.value && s.context === p.context) return s;
  return def.machine.resolveState({ value: p.value, context: p.context } as never);
}

/**
 * One inert actor scope per machine, reused by every step. XState's `transition()` builds a
 * throwaway actor per call, and that actor's constructor computes the machine's initial
 * snapshot: over half of what a step cost (profile of the engine bench). The step is
 * synchronous and its actions are only collected, never run, so one scope serves every call;
 * durable machines spawn nothing, so nothing registers in its system.
 */
type Scope = Parameters<AnyStateMachine['transition']>[2];
interface Inert {
  scope: Scope;
  /** Where the scope's action executor puts actions: swapped for a fresh array per call. */
  sink: ExecutableActionObject[];
}
const scopes = new WeakMap<AnyStateMachine, Inert>();

/** Runs `fn` on the machine's reused scope; returns its result and the actions it collected. */
function collecting<T>(machine: AnyStateMachine, fn: (scope: Scope) => T): [T, ExecutableActionObject[]] {
  let inert = scopes.get(machine);
  if (!inert) {
    const self = createActor(machine);
    const made: Inert = {
      sink: [],
      scope: {
        self,
        id: '',
        sessionId: '',
        system: self.system,
        logger: () => undefined,
        defer: () => undefined,
        emit: () => undefined,
        stopChild: () => undefined,
        actionExecutor: (action) => made.sink.push(action),
      },
    };
    scopes.set(machine, made);
    inert = made;
  }
  const actions: ExecutableActionObject[] = [];
  inert.sink = actions;
  return [fn(inert.scope), actions];
}

/** Creates the actor from its create event: initial state, then the create event itself. */
export function create(def: DurableMachine, event: EventFromLogic<AnyStateMachine>): Accepted {
  const m = def.machine;
  const [s0, a0] = collecting(m, (scope) => m.getInitialSnapshot(scope, def.input(event)));
  const [s1, a1] = collecting(m, (scope) => m.transition(s0, event, scope));
  return { accepted: true, ...persist(def, s1), status: def.status(s1), effects: effectsOf([...a0, ...a1]) };
}

/** The pure step the engine runs inside its transaction. */
export function step(def: DurableMachine, current: PersistedSnapshot, event: EventFromLogic<AnyStateMachine>): StepResult {
  const prev = restore(def, current);
  const [next, actions] = collecting(def.machine, (scope) => def.machine.transition(prev, event, scope));
  const effects = effectsOf(actions);
  if (next === prev && actions.length === 0) {
    return { accepted: false, snapshot: current, status: def.status(prev), effects: [] };
  }
  return { accepted: true, ...persist(def, next), status: def.status(next), effects };
}

/**
 * The status `event` would lead to from `current`, without making the snapshot: the reference a
 * rule that predicts it (as `statusAfterAnswer` does for an execution's answer) is tested against.
 */
export function statusAfter(def: DurableMachine, current: PersistedSnapshot, event: EventFromLogic<AnyStateMachine>): string {
  const [next] = collecting(def.machine, (scope) => def.machine.transition(restore(def, current), event, scope));
  return def.status(next);
}

/** Rebuilds a snapshot from a journal: the first event creates, the rest step. */
export function replay(def: DurableMachine, events: readonly EventBase[]): PersistedSnapshot {
  const first = events[0];
  const rest = events.slice(1);
  if (!first) throw new Error('empty journal');
  let snap = create(def, first).snapshot;
  for (const e of rest) snap = step(def, snap, e).snapshot;
  return snap;
}
