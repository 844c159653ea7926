/**
 * MARKET_WORKERS above 1 (ADR 0051): the marketplace served by that many processes sharing
 * MARKETPLACE_PORT through `node:cluster`. One event loop is one core, and the marketplace's
 * search, quote and purchase work is CPU in the event loop: one process per core uses them all.
 *
 * The primary is the process `npm start` began: it runs the other roles and supervises the
 * workers. Each worker is the same entry (bin/start.ts) with ANMPAY_ROLES=marketplace, its own
 * pool, actor host and search index; the primary hands each new connection to one worker in
 * turn (Node's round-robin on Linux), so keep-alive clients pay the hand-off once. A worker that
 * dies is forked again under the same number; SIGTERM to the primary drains every worker first.
 */
import cluster, { type Worker } from 'node:cluster';
import path from 'node:path';
import { StartupError } from './startup.ts';

/** The worker's number (0..N-1), kept across restarts: worker 0 runs the jobs one worker runs. */
const INDEX_ENV = 'ANMPAY_MARKET_WORKER';
const READY = 'anmpay:market-ready';

/** This process's worker number, or undefined for a process that is not a marketplace worker. */
export function marketWorkerIndex(): number | undefined {
  const v = process.env[INDEX_ENV];
  return cluster.isWorker && v !== undefined ? Number(v) : undefined;
}

/** From a worker whose services have started: the primary counts it as serving. */
export function reportWorkerReady(url: string): void {
  process.send?.({ type: READY, url });
}

export interface MarketWorkers {
  /** The marketplace's URL, as the first worker reported it. */
  url: string;
  /** The live workers' process ids, by worker number (undefined while one restarts). */
  pids(): Array<number | undefined>;
  stop(): Promise<void>;
}

export interface MarketWorkerOptions {
  count: number;
  /** Settings the workers get on top of this process's environment (ANM node, operator token). */
  env: Record<string, string>;
  log(msg: string): void;
  /** The workers' entry; default this process's (bin/start.ts). bench:market serves its own. */
  exec?: string;
  /** A worker still running after this long on stop is killed. */
  stopTimeoutMs?: number;
}

/** A worker that dies sooner than this after its start is restarted after a growing pause, so a crash loop does not spin. */
const STEADY_MS = 10_000;
const MAX_PAUSE_MS = 30_000;

/** Forks the workers and resolves once each serves; a worker that fails its start fails this (the others are stopped). */
export async function startMarketWorkers(o: MarketWorkerOptions): Promise<MarketWorkers> {
  // The entry that started this process, in its own language (.ts under tsx, .js when built).
  cluster.setupPrimary({ exec: o.exec ?? path.join(import.meta.dirname, `start${path.extname(import.meta.filename)}`) });
  const slots: Array<Worker | undefined> = Array.from({ length: o.count });
  const pauses: number[] = Array.from({ length: o.count }, () => 0);
  let stopping = false;
  let url = '';

  const fork = (i: number, initial: boolean): Promise<string> =>
    new Promise((resolve, reject) => {
      const worker = cluster.fork({ ...o.env, ANMPAY_ROLES: 'marketplace', [INDEX_ENV]: String(i) });
      slots[i] = worker;
      const forkedAt = Date.now();
      let ready = false;
      worker.on('message', (m: { type?: string; url?: string } | null) => {
        if (m?.type !== READY || ready) return;
        ready = true;
        o.log(`market worker ${i} (pid ${worker.process.pid}) serving`);
        resolve(m.url ?? '');
      });
      worker.once('exit', (code, signal) => {
        if (slots[i] === worker) slots[i] = undefined;
        const how = signal ? `signal ${signal}` : `exit code ${code}`;
        if (!ready) reject(new StartupError(`market worker ${i} stopped during its start (${how}); its error is above`));
        if (stopping || (initial && !ready)) return;
        pauses[i] = Date.now() - forkedAt < STEADY_MS ? Math.min(MAX_PAUSE_MS, Math.max(500, pauses[i]! * 2)) : 0;
        o.log(`market worker ${i} (pid ${worker.process.pid}) stopped (${how}); restarting${pauses[i] ? ` in ${pauses[i]} ms` : ''}`);
        setTimeout(() => {
          if (!stopping) fork(i, false).catch(() => undefined);
        }, pauses[i]).unref();
      });
    });

  const stop = async (): Promise<void> => {
    stopping = true;
    const live = slots.filter((w): w is Worker => w !== undefined && !w.isDead());
    await Promise.all(
      live.map(
        (w) =>
          new Promise<void>((resolve) => {
            const kill = setTimeout(() => w.process.kill('SIGKILL'), o.stopTimeoutMs ?? 30_000);
            w.once('exit', () => {
              clearTimeout(kill);
              resolve();
            });
            // The worker's own SIGTERM handler drains it (bin/start.ts), as for a single process.
            w.process.kill('SIGTERM');
          }),
      ),
    );
  };

  try {
    url = (await Promise.all(Array.from({ length: o.count }, (_, i) => fork(i, true))))[0]!;
  } catch (err) {
    await stop();
    throw err;
  }
  return { url, pids: () => slots.map((w) => w?.process.pid), stop };
}
