/**
 * Public-key recoveries handed to a worker thread while the service is busy.
 *
 * A recovery is about 80-110 µs of libsecp256k1 on the main thread, and a purchase needs two
 * (a routed execution two as well: the fee leg and the seller leg it forwards). Under load
 * the main thread is the first thing to saturate while the second core still has room, so
 * the recoveries asked for in one turn of the event loop go to a thread as one transferred
 * buffer and come back as one. Idle, a recovery runs at once on the main thread: a lone
 * request (routed execution's added latency) pays no hop.
 *
 * "Busy" is either of two readings. The event loop's utilization since the previous reading
 * (which moves on once it is 20 ms old) at 90 % or above: the main thread had no room, whatever
 * asked for recoveries. Or the last turn: one that asked for a recovery (`busyAt`, default 1),
 * or a batch still out. The turn alone misses a saturated routed execution, whose two
 * recoveries come in one turn among many turns of other work (the statements' answers, the
 * seller's); the utilization alone reacts a window late to a burst. A lone request meets
 * neither: an idle loop, and quiet turns before it.
 *
 * A thread that fails (it cannot load the addon, it exits) hands its batch back to the main
 * thread and is not used again. The thread keeps the process alive only while a batch is out.
 */
import { createRequire } from 'node:module';
import { performance, type EventLoopUtilization } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';

/** An uncompressed public key (65 bytes) from r ‖ s, the recovery id and the digest; null when none. */
export type Recover = (rs: Uint8Array, recId: 0 | 1, digest: Uint8Array) => Uint8Array | null;

/** One item on the wire: r ‖ s (64), recovery id (1), digest (32). */
const ITEM = 97;
/** One answer: the 65-byte key, or a first byte of 0 when there is none (a key starts 0x04). */
const KEY = 65;
/** The shortest window the loop's utilization is read over. */
const WINDOW_MS = 20;

// CommonJS, evaluated in the thread: the addon alone, as evm-recover.ts loads it.
const THREAD_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const lib = require(workerData.addon);
parentPort.on('message', ({ id, buf }) => {
  const input = new Uint8Array(buf);
  const n = input.length / ${ITEM};
  const out = new Uint8Array(n * ${KEY});
  for (let i = 0; i < n; i++) {
    const at = i * ${ITEM};
    try {
      out.set(lib.ecdsaRecover(input.subarray(at, at + 64), input[at + 64], input.subarray(at + 65, at + ${ITEM}), false), i * ${KEY});
    } catch {
      out[i * ${KEY}] = 0;
    }
  }
  parentPort.postMessage({ id, buf: out.buffer }, [out.buffer]);
});
`;

interface Pending {
  rs: Uint8Array;
  recId: 0 | 1;
  digest: Uint8Array;
  resolve(key: Uint8Array | null): void;
}

export class RecoveryThread {
  private worker: Worker | null = null;
  private failed = false;
  private queue: Pending[] = [];
  private readonly out = new Map<number, Pending[]>();
  private nextId = 0;
  private asked = 0;
  private lastTurn = 0;
  private turnEnds = false;
  private loopSince: EventLoopUtilization = performance.eventLoopUtilization();
  private loopBusy = false;
  private turnLoopBusy = false;

  constructor(
    private readonly inline: Recover,
    /** The addon's module path; null where it does not load (the thread is never used). */
    private readonly addon: string | null,
    private readonly busyAt = 1,
    /** The event loop's utilization at or above which the main thread counts as busy. */
    private readonly busyLoop = 0.9,
  ) {}

  /** The key, at once when the service is idle, from the thread when it is busy. */
  recover(rs: Uint8Array, recId: 0 | 1, digest: Uint8Array): Promise<Uint8Array | null> {
    // The loop is read once, at a turn's first recovery: every recovery of one turn takes the
    // same way, so requests that arrived together are answered together (one batched write).
    if (this.asked++ === 0) this.turnLoopBusy = this.loopIsBusy();
    this.endTurnSoon();
    if (this.failed || this.addon === null || (this.lastTurn < this.busyAt && this.out.size === 0 && !this.turnLoopBusy)) return Promise.resolve(this.inlineKey(rs, recId, digest));
    return new Promise((resolve) => this.queue.push({ rs, recId, digest, resolve }));
  }

  /** The loop's utilization since the previous reading; the reading moves on once it is 20 ms old. */
  private loopIsBusy(): boolean {
    const now = performance.eventLoopUtilization();
    const window = performance.eventLoopUtilization(now, this.loopSince);
    if (window.idle + window.active < WINDOW_MS) return this.loopBusy;
    this.loopSince = now;
    this.loopBusy = window.utilization >= this.busyLoop;
    return this.loopBusy;
  }

  /** Stops the thread; recoveries asked for afterwards run on the main thread. */
  async close(): Promise<void> {
    const w = this.worker;
    this.failed = true;
    this.worker = null;
    this.giveBack();
    await w?.terminate();
  }

  /** The turn's count becomes the last turn's in the check phase, when the turn's batch is sent. */
  private endTurnSoon(): void {
    if (this.turnEnds) return;
    this.turnEnds = true;
    setImmediate(() => {
      this.turnEnds = false;
      this.lastTurn = this.asked;
      this.asked = 0;
      this.send();
      // A turn that asked for any is followed until one asks for none, so that a lone request
      // after a busy spell is not judged by the spell.
      if (this.lastTurn > 0) this.endTurnSoon();
    });
  }

  private send(): void {
    if (this.queue.length === 0) return;
    const batch = this.queue;
    this.queue = [];
    const w = this.thread();
    if (!w) return this.runInline(batch);
    const buf = new Uint8Array(batch.length * ITEM);
    batch.forEach((p, i) => {
      buf.set(p.rs, i * ITEM);
      buf[i * ITEM + 64] = p.recId;
      buf.set(p.digest, i * ITEM + 65);
    });
    const id = this.nextId++;
    this.out.set(id, batch);
    // Referenced while a batch is out, so that a process does not end with a recovery unanswered.
    if (this.out.size === 1) w.ref();
    w.postMessage({ id, buf: buf.buffer }, [buf.buffer]);
  }

  private thread(): Worker | null {
    if (this.worker || this.failed || this.addon === null) return this.worker;
    try {
      // No `--import tsx` from this process's flags: the thread's source is plain CommonJS.
      const w = new Worker(THREAD_SOURCE, { eval: true, execArgv: [], workerData: { addon: this.addon } });
      w.on('message', ({ id, buf }: { id: number; buf: ArrayBuffer }) => this.answered(id, new Uint8Array(buf)));
      w.on('error', () => this.fail());
      w.on('exit', () => this.fail());
      // After the listeners, which ref the thread's port: a thread with nothing out must not keep the process alive.
      w.unref();
      this.worker = w;
    } catch {
      this.failed = true;
    }
    return this.worker;
  }

  private answered(id: number, keys: Uint8Array): void {
    const batch = this.out.get(id);
    if (!batch) return;
    this.out.delete(id);
    if (this.out.size === 0) this.worker?.unref();
    batch.forEach((p, i) => p.resolve(keys[i * KEY] === 0 ? null : keys.slice(i * KEY, (i + 1) * KEY)));
  }

  private fail(): void {
    this.failed = true;
    this.worker = null;
    this.giveBack();
  }

  /** Batches that were out, and the queue, answered on the main thread. */
  private giveBack(): void {
    for (const batch of this.out.values()) this.runInline(batch);
    this.out.clear();
    const q = this.queue;
    this.queue = [];
    this.runInline(q);
  }

  private runInline(batch: Pending[]): void {
    for (const p of batch) p.resolve(this.inlineKey(p.rs, p.recId, p.digest));
  }

  /** The main thread's recovery, none where it throws (the native addon does where there is no key), as the thread answers. */
  private inlineKey(rs: Uint8Array, recId: 0 | 1, digest: Uint8Array): Uint8Array | null {
    try {
      return this.inline(rs, recId, digest);
    } catch {
      return null;
    }
  }
}

/** The path `require` resolves for the addon alone, or null where it is not installed. */
export function addonPath(from: string): string | null {
  try {
    return createRequire(from).resolve('secp256k1/bindings.js');
  } catch {
    return null;
  }
}
