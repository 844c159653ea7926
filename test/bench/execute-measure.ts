/**
 * bench:execute's measured run: the rate and latency of a run of `n` operations, and what each
 * operation cost in CPU: this process's (the seller's and the load's when they are here),
 * the seller's process's when it has its own,
 * the marketplace's own processes' when it runs apart (its workers and their primary, summed),
 * the load generator's when it is another process, the bench's own PostgreSQL backends' (named
 * by application_name: the marketplace's and its outbox relays' included) and the local
 * nats-server's (shared with any other user of it); and the marketplace's statements per
 * operation. With `profile`, a V8 CPU profile of this process over the run.
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { backendsCpu, busyShare, machineTicks, natsServerPid, procCpu } from './proc-cpu.ts';
import type { StatementCounts } from './statement-count.ts';
import { drive, type RunStats } from './stats.ts';

export interface Row {
  name: string;
  r: RunStats;
  /** CPU ms per operation of this process. */
  cpuMs: number;
  /** Of the marketplace's processes, when they are not this one. */
  serviceMs?: number;
  /** Of the load generator's process, when it is not this one. */
  loadMs?: number;
  /** Of the seller's process, when it is not this one. */
  sellerMs?: number;
  busy: number;
  /** Executions per second until the work after the answers was done too (routed runs). */
  doneRate?: number;
  /** CPU ms per operation of the bench's PostgreSQL backends (none on PGlite). */
  pgMs: number;
  /** CPU ms per operation of the local nats-server, when one runs here. */
  natsMs?: number;
  /** The marketplace's statements per operation, the outbox relay's apart. */
  statements?: { all: number; relay: number };
}

/** A run of operations: driven from this process, or by a load generator in another (its CPU seconds with it). */
export type Run = () => Promise<{ r: RunStats; loadCpuS?: number }>;

/** `op` driven `n` times from this process with `conc` in flight. */
export const inProcess =
  (n: number, conc: number, op: (i: number) => Promise<unknown>): Run =>
  async () => ({ r: await drive(n, conc, op) });

const NATS_PID = natsServerPid();

export async function measure(
  opts: {
    name: string;
    n: number;
    backendPids: () => Promise<number[]>;
    after?: (() => Promise<void>) | undefined;
    profile?: string | undefined;
    /** The marketplace's processes' CPU seconds, when they are not this one. */
    serviceCpu?: (() => number) | undefined;
    /** The seller's process's CPU seconds, when it is not this one. */
    sellerCpu?: (() => number) | undefined;
    /** Its statement counts over the run. */
    counts?: { begin(): Promise<void>; end(): Promise<StatementCounts> };
  },
  run: Run,
): Promise<Row> {
  const { name, n, after, profile } = opts;
  process.stderr.write(`measuring ${name}…\n`);
  const session = profile ? new Session() : undefined;
  if (session) {
    session.connect();
    await session.post('Profiler.enable');
    await session.post('Profiler.start');
  }
  await opts.counts?.begin();
  const cpu0 = process.cpuUsage();
  const service0 = opts.serviceCpu?.() ?? 0;
  const seller0 = opts.sellerCpu?.() ?? 0;
  const nats0 = NATS_PID === undefined ? 0 : procCpu(NATS_PID);
  const ticks0 = machineTicks();
  const { out, cpu: pgS } = await backendsCpu(
    opts.backendPids,
    (async () => {
      const ran = await run();
      // The wait for the work after the answers counts toward done/s, from the run's end: a load
      // generator in another process takes a while to start, which is no execution's time.
      const t = performance.now();
      await after?.();
      return { ...ran, seconds: ran.r.seconds + (performance.now() - t) / 1000 };
    })(),
  );
  const cpu = process.cpuUsage(cpu0);
  const serviceS = opts.serviceCpu ? opts.serviceCpu() - service0 : undefined;
  const sellerS = opts.sellerCpu ? opts.sellerCpu() - seller0 : undefined;
  const natsS = NATS_PID === undefined ? undefined : procCpu(NATS_PID) - nats0;
  const counts = await opts.counts?.end();
  if (session) {
    const { profile: p } = await session.post('Profiler.stop');
    writeFileSync(profile!, JSON.stringify(p));
    session.disconnect();
  }
  return {
    name,
    r: out.r,
    cpuMs: (cpu.user + cpu.system) / 1000 / n,
    ...(serviceS !== undefined && { serviceMs: (serviceS * 1000) / n }),
    ...(out.loadCpuS !== undefined && { loadMs: (out.loadCpuS * 1000) / n }),
    ...(sellerS !== undefined && { sellerMs: (sellerS * 1000) / n }),
    busy: busyShare(ticks0, machineTicks()),
    pgMs: (pgS * 1000) / n,
    ...(natsS !== undefined && { natsMs: (natsS * 1000) / n }),
    ...(after && { doneRate: n / out.seconds }),
    ...(counts && { statements: { all: counts.statements / n, relay: counts.relay / n } }),
  };
}

/**
 * CPU per second of each process group while nothing is asked (outbox relays' polls, the
 * seller-leg watch, the search index's catch-up): a slow run's per-operation figures carry it too.
 */
export async function idleCpu(o: { seconds: number; backendPids: () => Promise<number[]>; serviceCpu?: (() => number) | undefined }): Promise<{ serviceMs?: number; cpuMs: number; pgMs: number }> {
  const cpu0 = process.cpuUsage();
  const service0 = o.serviceCpu?.() ?? 0;
  const { cpu: pgS } = await backendsCpu(o.backendPids, new Promise((r) => setTimeout(r, o.seconds * 1000)));
  const cpu = process.cpuUsage(cpu0);
  return {
    ...(o.serviceCpu && { serviceMs: ((o.serviceCpu() - service0) * 1000) / o.seconds }),
    cpuMs: (cpu.user + cpu.system) / 1000 / o.seconds,
    pgMs: (pgS * 1000) / o.seconds,
  };
}
