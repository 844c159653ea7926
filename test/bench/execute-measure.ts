/**
 * bench:execute's measured run: the rate and latency of `op` driven `n` times with `conc` in
 * flight, and what each operation cost in CPU: this process's, the bench's own PostgreSQL
 * backends' (named by application_name, the outbox relay's included) and the local
 * nats-server's (shared with any other user of it). With `profile`, a V8 CPU profile of the run.
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { backendsCpu, busyShare, machineTicks, natsServerPid, procCpu } from './proc-cpu.ts';
import { drive, type RunStats } from './stats.ts';

export interface Row {
  name: string;
  r: RunStats;
  cpuMs: number;
  busy: number;
  /** Executions per second until the work after the answers was done too (routed runs). */
  doneRate?: number;
  /** CPU ms per operation of the bench's PostgreSQL backends (none on PGlite). */
  pgMs: number;
  /** CPU ms per operation of the local nats-server, when one runs here. */
  natsMs?: number;
}

const NATS_PID = natsServerPid();

export async function measure(
  opts: { name: string; n: number; conc: number; backendPids: () => Promise<number[]>; after?: () => Promise<void>; profile?: string | undefined },
  op: (i: number) => Promise<unknown>,
): Promise<Row> {
  const { name, n, after, profile } = opts;
  process.stderr.write(`measuring ${name}…\n`);
  const session = profile ? new Session() : undefined;
  if (session) {
    session.connect();
    await session.post('Profiler.enable');
    await session.post('Profiler.start');
  }
  const cpu0 = process.cpuUsage();
  const nats0 = NATS_PID === undefined ? 0 : procCpu(NATS_PID);
  const ticks0 = machineTicks();
  const t0 = performance.now();
  const { out: r, cpu: pgS } = await backendsCpu(
    opts.backendPids,
    (async () => {
      const stats = await drive(n, opts.conc, op);
      await after?.();
      return stats;
    })(),
  );
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  const natsS = NATS_PID === undefined ? undefined : procCpu(NATS_PID) - nats0;
  if (session) {
    const { profile: p } = await session.post('Profiler.stop');
    writeFileSync(profile!, JSON.stringify(p));
    session.disconnect();
  }
  return {
    name,
    r,
    cpuMs: (cpu.user + cpu.system) / 1000 / n,
    busy: busyShare(ticks0, machineTicks()),
    pgMs: (pgS * 1000) / n,
    ...(natsS !== undefined && { natsMs: (natsS * 1000) / n }),
    ...(after && { doneRate: n / seconds }),
  };
}
