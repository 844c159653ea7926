/**
 * The outbox relay of the real backends on a `node:worker_threads` thread (ADR 0105).
 *
 * Under load the main thread is what saturates while the second core has room, and the relay
 * (a claim's transaction, then a JetStream publish per row: a request with a timer, a mux
 * entry and an error object built on every cancel) was a few per cent of it. The thread runs
 * the same `OutboxRelay` over a small pool and a NATS connection of its own, so the outbox's
 * semantics (SKIP LOCKED claims, marks committed after the publishes, dedupe by message id)
 * are those of the inline relay.
 *
 * A thread that cannot start or exits while running is replaced by the inline relay for good
 * (logged once): the rows it had claimed were not marked (its transaction died with its
 * connections), and the inline relay's first claim, a full scan, finds them.
 */
import { Worker } from 'node:worker_threads';
import { recordOutboxBatch } from '../ops/metrics.ts';
import type { OutboxRelay, OutboxRelayOptions } from './outbox-relay.ts';

export interface RelayThreadConfig {
  /** The main pool's connection string: its application_name, if any, names the thread's connections too. */
  databaseUrl: string;
  /** The schema the main pool puts first on its search path, if any. */
  schema?: string | undefined;
  natsUrl: string;
  namespace: string;
  /** The thread's pool (default 2: a claim beside a prune or a `drainOnce`). */
  poolSize?: number;
  /** Where the one line on a fallback goes (default stderr). */
  log?: (line: string) => void;
}

/** What the thread is started with: options that cross a structured clone. */
export interface RelayThreadData {
  databaseUrl: string;
  schema: string | undefined;
  natsUrl: string;
  namespace: string;
  poolSize: number;
  relay: Omit<OutboxRelayOptions, 'onBatch'>;
}

export type ToThread = 'nudge' | { type: 'drain'; id: number } | { type: 'stop' };
export type FromThread =
  | { type: 'ready' }
  | { type: 'batch'; rows: number; age: number }
  | { type: 'drained'; id: number; count: number }
  | { type: 'drained'; id: number; error: string }
  | { type: 'stopped' };

/** How long a stop waits for the thread's relay and connections before ending it anyway. */
const STOP_CAP_MS = 10_000;

interface Drain {
  resolve: (count: number) => void;
  reject: (err: Error) => void;
}

export class RelayThread {
  private worker: Worker | null = null;
  private fallen = false;
  private stopping = false;
  private nudged = false;
  private local: OutboxRelay | null = null;
  private readonly drains = new Map<number, Drain>();
  private nextId = 0;
  private whenReady: (() => void) | null = null;
  private exit: Promise<void> = Promise.resolve();
  private lastError = '';

  constructor(
    private readonly config: RelayThreadConfig,
    /** The relay of the main thread: for a fallback, and for `drainOnce` while no thread runs. */
    private readonly inline: () => OutboxRelay,
    private readonly opts: OutboxRelayOptions = {},
  ) {}

  /** The running thread, if any (tests end it as a crash would). */
  get thread(): Worker | null {
    return this.worker;
  }

  /** Resolves once the thread relays, or the inline relay does in its place. */
  async start(): Promise<void> {
    this.stopping = false;
    if (this.fallen) return this.relay().start();
    if (this.worker) return;
    let w: Worker;
    try {
      w = new Worker(bootstrapUrl(), { execArgv: [], workerData: this.data() });
    } catch (err) {
      this.lastError = err instanceof Error ? err.message : String(err);
      return this.fallBack();
    }
    this.worker = w;
    const ready = new Promise<void>((resolve) => (this.whenReady = resolve));
    this.exit = new Promise<void>((resolve) => w.once('exit', () => resolve()));
    w.on('message', (m: FromThread) => this.received(m));
    w.on('error', (err: unknown) => (this.lastError = err instanceof Error ? err.message : String(err)));
    w.on('exit', () => this.exited(w));
    await ready;
  }

  /**
   * One message per turn of the event loop however many commits nudge in it: the thread's
   * poller then gathers as the inline one would, which could not tell several nudges in a
   * turn from one either.
   */
  nudge(): void {
    if (this.fallen) return this.relay().nudge();
    if (this.nudged || !this.worker) return;
    this.nudged = true;
    this.worker.postMessage('nudge' satisfies ToThread);
    setImmediate(() => (this.nudged = false));
  }

  /** Publishes one batch (on the thread while it runs); returns how many rows it published. */
  drainOnce(): Promise<number> {
    const w = this.worker;
    if (!w || this.stopping) return this.relay().drainOnce();
    const id = this.nextId++;
    return new Promise<number>((resolve, reject) => {
      this.drains.set(id, { resolve, reject });
      w.postMessage({ type: 'drain', id } satisfies ToThread);
    });
  }

  /** Stops the relay, its connections, then the thread: nothing of it keeps the process alive. */
  async stop(): Promise<void> {
    const w = this.worker;
    if (w && !this.stopping) {
      const cap = setTimeout(() => void w.terminate(), STOP_CAP_MS);
      void this.exit.then(() => clearTimeout(cap));
      w.postMessage({ type: 'stop' } satisfies ToThread);
    }
    this.stopping = true;
    if (w) await this.exit;
    await this.local?.stop();
  }

  private data(): RelayThreadData {
    const { onBatch: _onBatch, ...relay } = this.opts;
    const c = this.config;
    return { databaseUrl: c.databaseUrl, schema: c.schema, natsUrl: c.natsUrl, namespace: c.namespace, poolSize: c.poolSize ?? 2, relay };
  }

  private received(m: FromThread): void {
    switch (m.type) {
      case 'ready':
        this.readyNow();
        break;
      case 'batch':
        (this.opts.onBatch ?? recordOutboxBatch)(m.rows, m.age);
        break;
      case 'drained': {
        const d = this.drains.get(m.id);
        this.drains.delete(m.id);
        if ('error' in m) d?.reject(new Error(m.error));
        else d?.resolve(m.count);
        break;
      }
      case 'stopped':
        void this.worker?.terminate();
        break;
    }
  }

  private exited(w: Worker): void {
    if (this.worker !== w) return;
    this.worker = null;
    if (this.stopping) {
      this.readyNow();
      this.redrain();
      return;
    }
    this.fallBack();
  }

  private fallBack(): void {
    this.fallen = true;
    const log = this.config.log ?? ((line: string) => void process.stderr.write(`${line}\n`));
    log(`outbox relay: the relay thread ${this.lastError ? `failed (${this.lastError})` : 'exited'}; relaying on the main thread from now on`);
    this.relay().start();
    this.readyNow();
    this.redrain();
  }

  /** Drains the thread did not answer, run here: a caller waiting on one is not left hanging. */
  private redrain(): void {
    for (const d of this.drains.values()) this.relay().drainOnce().then(d.resolve, d.reject);
    this.drains.clear();
  }

  private readyNow(): void {
    const r = this.whenReady;
    this.whenReady = null;
    r?.();
  }

  private relay(): OutboxRelay {
    return (this.local ??= this.inline());
  }
}

/**
 * The thread's first module: it registers tsx's loader, then imports the TypeScript entry.
 * `execArgv: ['--import', 'tsx']` does not take on Node 20's worker threads (tsx registers
 * itself from `--import` on the main thread only), and the parent's flags would not exist
 * under vitest. A tsx that does not resolve throws here: the relay then runs inline.
 */
function bootstrapUrl(): URL {
  const tsx = import.meta.resolve('tsx/esm/api');
  const entry = new URL('./relay-thread-entry.ts', import.meta.url).href;
  const source = `const { register } = await import(${JSON.stringify(tsx)});\nregister();\nawait import(${JSON.stringify(entry)});\n`;
  return new URL(`data:text/javascript,${encodeURIComponent(source)}`);
}
