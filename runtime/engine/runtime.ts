import type { Db } from '../../storage/db.ts';
import type { Bus } from '../bus/types.ts';
import { ActorHost } from './actor-host.ts';
import type { ActorHostHooks } from './actor-types.ts';
import { OutboxRelay } from './outbox-relay.ts';
import type { MachineRegistry } from './registry.ts';
import { SnapshotFeed } from './snapshot-feed.ts';
import { TimerSweeper, type TimerSweeperOptions } from './timer-sweeper.ts';

export interface EngineOptions {
  db: Db;
  bus: Bus;
  registry: MachineRegistry;
  hooks?: ActorHostHooks;
  sweeper?: TimerSweeperOptions;
  consumerConcurrency?: number;
  ackWaitMs?: number;
}

/** The engine's moving parts wired together; `start`/`stop` in dependency order. */
export class Engine {
  readonly host: ActorHost;
  readonly relay: OutboxRelay;
  readonly sweeper: TimerSweeper;
  readonly feed: SnapshotFeed;

  constructor(private readonly opts: EngineOptions) {
    this.relay = new OutboxRelay(opts.db, opts.bus);
    this.host = new ActorHost({ db: opts.db, bus: opts.bus, registry: opts.registry, hooks: opts.hooks, onOutbox: () => this.relay.nudge() });
    this.sweeper = new TimerSweeper(opts.db, this.host, opts.sweeper);
    this.feed = new SnapshotFeed(opts.bus);
  }

  /**
   * Starts the parts a process runs (default all). A gateway-only process applies commands
   * through `host` and relays its own outbox rows, but takes no bus events or timers: those go
   * to the runtime processes. The relay runs wherever commits write outbox rows, so an effect
   * leaves at once rather than on another process's next poll.
   */
  async start(parts: { feed?: boolean; consumer?: boolean; sweeper?: boolean } = {}): Promise<void> {
    if (parts.feed !== false) this.feed.start();
    if (parts.consumer !== false) await this.host.start({ concurrency: this.opts.consumerConcurrency ?? 32, ...(this.opts.ackWaitMs ? { ackWaitMs: this.opts.ackWaitMs } : {}) });
    this.relay.start();
    if (parts.sweeper !== false) this.sweeper.start();
  }

  /** Drain: stop taking new work, let in-flight transactions finish, then stop publishing. */
  async stop(): Promise<void> {
    await this.sweeper.stop();
    await this.host.stop();
    await this.relay.stop();
    await this.feed.stop();
  }
}
