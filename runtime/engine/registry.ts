import type { DurableMachine } from '../../machines/kit/durable.ts';
import type { CreateCompanion } from './actor-types.ts';
import { UnknownKindError } from './errors.ts';

/** Machines the runtime can host, by actor kind. */
export class MachineRegistry {
  private readonly byKind = new Map<string, DurableMachine>();
  private readonly companions = new Map<string, CreateCompanion>();

  constructor(defs: readonly DurableMachine[] = []) {
    for (const d of defs) this.register(d);
  }

  /** `onCreate` is written in the statement that creates each actor of this kind. */
  register(def: DurableMachine, onCreate?: CreateCompanion): this {
    this.byKind.set(def.kind, def);
    if (onCreate) this.companions.set(def.kind, onCreate);
    else this.companions.delete(def.kind);
    return this;
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
