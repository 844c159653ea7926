/**
 * CPU seconds of processes read from /proc, for benchmarks on a machine shared with other
 * work: wall-clock rates swing with the load, the CPU spent per operation does not.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

/** User + system CPU seconds of one process (0 if it is gone). */
export function procCpu(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) / 100; // USER_HZ
  } catch {
    return 0;
  }
}

/** Pids of the processes with this exact name (none if pgrep finds none). */
function pidsNamed(name: string): number[] {
  try {
    return execFileSync('pgrep', ['-x', name]).toString().trim().split('\n').map(Number).filter((p) => p > 0);
  } catch {
    return [];
  }
}

/** The local nats-server's pid, if one runs. */
export function natsServerPid(): number | undefined {
  return pidsNamed('nats-server')[0];
}

/**
 * CPU seconds used while `work` runs by the PostgreSQL backends that `pids()` names (sampled
 * every 200 ms, as pool connections come and go).
 */
export async function backendsCpu<T>(pids: () => Promise<number[]>, work: Promise<T>): Promise<{ out: T; cpu: number }> {
  const first = new Map<number, number>();
  const last = new Map<number, number>();
  const sample = async () => {
    for (const pid of await pids()) {
      const v = procCpu(pid);
      if (!first.has(pid)) first.set(pid, v);
      last.set(pid, v);
    }
  };
  await sample();
  const timer = setInterval(() => void sample().catch(() => undefined), 200);
  try {
    const out = await work;
    await sample();
    return { out, cpu: [...last].reduce((a, [pid, v]) => a + v - (first.get(pid) ?? v), 0) };
  } finally {
    clearInterval(timer);
  }
}

/** CPU seconds of every PostgreSQL server process on the machine (backends, WAL writer, checkpointer). */
export function postgresServerCpu(): number {
  return pidsNamed('postgres').reduce((s, pid) => s + procCpu(pid), 0);
}

/** Busy and total jiffies of the whole machine (all cores), from /proc/stat. */
export function machineTicks(): { busy: number; total: number } {
  const f = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  const total = f.reduce((a, b) => a + b, 0);
  const idle = (f[3] ?? 0) + (f[4] ?? 0); // idle + iowait
  return { busy: total - idle, total };
}

/** Share of all cores busy between two readings (0..1). */
export function busyShare(a: { busy: number; total: number }, b: { busy: number; total: number }): number {
  return b.total > a.total ? (b.busy - a.busy) / (b.total - a.total) : 0;
}

/** CPU seconds of this process's children that have ended (and been waited for): the cost of a load generator run as one. */
export function endedChildrenCpu(): number {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[13]) + Number(f[14])) / 100; // cutime + cstime, USER_HZ
}
