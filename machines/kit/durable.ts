import type { AnyStateMachine, EventFromLogic, InputFrom, SnapshotFrom } from 'xstate';
import type { z } from 'zod';

/**
 * What the runtime needs to host a machine durably. Machines stay pure: time and ids arrive
 * in events (`id`, `at`), and effects are named actions with serialisable params that the
 * runtime turns into timer and outbox rows (see `effects.ts`).
 */
export interface DurableMachine<M extends AnyStateMachine = AnyStateMachine> {
  /** Actor kind, also the `machine` column: `payment_intent`, `refund`, … */
  readonly kind: string;
  readonly version: number;
  readonly machine: M;
  /** Validates every event before the transaction; a failure is a typed rejection. */
  readonly events: z.ZodType<EventFromLogic<M>>;
  /** The event type that brings a new actor into being. */
  readonly createEvent: string;
  /** Machine input derived from the create event. */
  input(create: EventFromLogic<M>): InputFrom<M>;
  /** The public state stored in `actors.state`, derived from the snapshot. */
  status(snapshot: SnapshotFrom<M>): string;
}

/** Every engine event carries a unique id (dedupe key) and the time the fact happened. */
export interface EventBase {
  type: string;
  id: string;
  /** Unix milliseconds. */
  at: number;
}

/**
 * A machine's context factory that tolerates a missing input. XState's `initialTransition()`
 * builds a throwaway actor on every call (and the step keeps one per machine, step.ts), and
 * that actor computes an initial snapshot without input; a factory that throws there costs an
 * exception (about 60 µs) every time.
 * The placeholder is never persisted: restored snapshots bring their own context.
 */
export function contextFrom<I, C>(factory: (input: I) => C): ({ input }: { input: I }) => C {
  const placeholder = {} as C;
  return ({ input }) => ((input as I | undefined) === undefined ? placeholder : factory(input));
}
