import type { DurableMachine } from '../../machines/kit/durable.ts';
import { UnknownKindError } from './errors.ts';

/** Machines the runtime can host, by actor kind. */
export class MachineRegistry {
  private readonly byKind = new Map<string, DurableMachine>();

  constructor(defs: readonly DurableMachine[] = []) {
    for (const d of defs) this.register(d);
  }

  register(def: DurableMachine): this {
    this.byKind.set(def.kind, def);
    return this;
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
