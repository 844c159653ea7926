import type { Db } from '../../storage/db.ts';
import type { Bus } from '../bus/types.ts';
import { ActorHost } from './actor-host.ts';
import type { ActorHostHooks } from './actor-types.ts';
import { OutboxRelay } from './outbox-relay.ts';
import { RelayThread, type RelayThreadConfig } from './relay-thread.ts';
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
  /**
   * How a thread reaches the backends (ADR 0105): given, and the backends are PostgreSQL and
   * NATS, the outbox relay runs on a worker thread; otherwise on the main thread.
   */
  relayThread?: RelayThreadConfig | undefined;
}

/** The engine's moving parts wired together; `start`/`stop` in dependency order. */
export class Engine {
  readonly host: ActorHost;
  readonly relay: OutboxRelay | RelayThread;
  readonly sweeper: TimerSweeper;
  readonly feed: SnapshotFeed;

  constructor(private readonly opts: EngineOptions) {
    const inline = (): OutboxRelay => new OutboxRelay(opts.db, opts.bus);
    // PGlite lives in this thread's memory and the in-memory bus in its heap: no thread could reach them.
    const real = opts.db.kind === 'postgres' && opts.bus.kind === 'nats';
    this.relay = real && opts.relayThread ? new RelayThread(opts.relayThread, inline) : inline();
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
    await this.relay.start();
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
