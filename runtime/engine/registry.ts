import type { DurableMachine } from '../../machines/kit/durable.ts';
import type { CreateCompanion } from './actor-types.ts';
import { UnknownKindError } from './errors.ts';

/** How the engine writes the creates of one kind. */
export interface CreateOptions {
  /**
   * The create's statement commits without waiting for its WAL to reach the disk
   * (`synchronous_commit = off` for that transaction alone): for kinds whose new actor, lost in
   * a crash of PostgreSQL within the WAL writer's delay, costs its caller a retry and nothing
   * else. Any later durable commit (an event on the same actor included) flushes it first.
   */
  asyncCommit?: boolean;
  /**
   * Event types of this kind whose step commits the same way. Only for a step that a later
   * durable commit on the same actor must follow before anything it led to can move money;
   * the kind's registration says why that holds (ADR 0074 for the purchase's execution).
   * A step shared by several waiting events (ADR 0053) stays durable.
   */
  asyncEvents?: readonly string[];
}

/** Machines the runtime can host, by actor kind. */
export class MachineRegistry {
  private readonly byKind = new Map<string, DurableMachine>();
  private readonly companions = new Map<string, CreateCompanion>();
  private readonly asyncCreates = new Set<string>();
  private readonly asyncSteps = new Map<string, ReadonlySet<string>>();

  constructor(defs: readonly DurableMachine[] = []) {
    for (const d of defs) this.register(d);
  }

  /** `onCreate` is written in the statement that creates each actor of this kind. */
  register(def: DurableMachine, onCreate?: CreateCompanion, opts: CreateOptions = {}): this {
    this.byKind.set(def.kind, def);
    if (onCreate) this.companions.set(def.kind, onCreate);
    else this.companions.delete(def.kind);
    if (opts.asyncCommit) this.asyncCreates.add(def.kind);
    else this.asyncCreates.delete(def.kind);
    if (opts.asyncEvents?.length) this.asyncSteps.set(def.kind, new Set(opts.asyncEvents));
    else this.asyncSteps.delete(def.kind);
    return this;
  }

  /** Whether creates of this kind commit asynchronously (`CreateOptions.asyncCommit`). */
  asyncCreate(kind: string): boolean {
    return this.asyncCreates.has(kind);
  }

  /** Whether a step of this kind on this event type commits asynchronously (`CreateOptions.asyncEvents`). */
  asyncEvent(kind: string, type: string): boolean {
    return this.asyncSteps.get(kind)?.has(type) ?? false;
  }

  companion(kind: string): CreateCompanion | undefined {
    return this.companions.get(kind);
  }

  get(kind: string): DurableMachine {
    const def = this.byKind.get(kind);
    if (!def) throw new UnknownKindError(kind);
    return def;
  }

  kinds(): string[] {
    return [...this.byKind.keys()];
  }
}
