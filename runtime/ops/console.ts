/**
 * The operator console's runtime side in one object for the gateway: actor reads, the
 * overview, statecharts of every registered machine, and replay-verify. Reads only.
 */
import type { Db } from '../../storage/db.ts';
import type { MachineRegistry } from '../engine/registry.ts';
import { ActorReads } from './actor-reads.ts';
import { extractGraph, type StateGraph } from './graph.ts';
import { LayoutCache, type LaidGraph } from './layout.ts';
import { readOverview, type ChainTips, type Overview } from './overview.ts';
import { verifyReplay, type VerifyResult } from './verify.ts';

export class OpsConsole {
  readonly actors: ActorReads;
  private readonly layouts = new LayoutCache();

  constructor(
    private readonly db: Db,
    readonly registry: MachineRegistry,
    private readonly tips: ChainTips = {},
  ) {
    this.actors = new ActorReads(db);
  }

  kinds(): string[] {
    return this.registry.kinds();
  }

  /** Null for a kind no registered machine hosts. */
  graph(kind: string): StateGraph | null {
    if (!this.registry.kinds().includes(kind)) return null;
    const def = this.registry.get(kind);
    return extractGraph(def.machine, def);
  }

  async layout(kind: string): Promise<LaidGraph | null> {
    const g = this.graph(kind);
    return g ? this.layouts.get(g) : null;
  }

  overview(): Promise<Overview> {
    return readOverview(this.db, this.tips);
  }

  /** Null for an unknown actor. */
  async verify(id: string): Promise<VerifyResult | null> {
    const row = await this.actors.get(id);
    if (!row || !this.registry.kinds().includes(row.kind)) return null;
    const events = await this.actors.events(id);
    return verifyReplay(this.registry, { ...row, events });
  }
}
