/**
 * wrk (C, from Debian's package) as bench:api's load generator when it is installed: on two
 * cores shared by the load generator and the service, autocannon (JavaScript) took a share of
 * the CPU that the service needed. Each run's script (test/bench/wrk/*.lua) prints one JSON
 * line of figures; the driver parses it.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { runProcess } from '../helpers/cli.ts';

const WRK = '/usr/bin/wrk';
const DIR = path.join(import.meta.dirname, 'wrk');

export interface LoadFigures {
  requests: number;
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
}

export function wrkInstalled(): boolean {
  return existsSync(WRK);
}

/** `timeoutS`: an answer later than this counts as an error (wrk's default is 2 s). */
export async function runWrk(opts: { url: string; script: 'create' | 'read' | 'bare' | 'session' | 'requests' | 'links'; connections: number; seconds: number; timeoutS?: number; env?: Record<string, string> }): Promise<LoadFigures> {
  const args = ['-t1', `-c${opts.connections}`, `-d${opts.seconds}s`, ...(opts.timeoutS ? [`--timeout`, `${opts.timeoutS}s`] : []), '--latency', '-s', path.join(DIR, `${opts.script}.lua`), opts.url];
  const r = await runProcess(WRK, args, { ...opts.env, BENCH_WRK_DIR: DIR });
  const line = r.stdout.split('\n').find((l) => l.startsWith('WRK_JSON '));
  if (r.code !== 0 || !line) throw new Error(`wrk exited with ${r.code}: ${r.stdout} ${r.stderr}`);
  const j = JSON.parse(line.slice('WRK_JSON '.length)) as { requests: number; duration_us: number; p50_us: number; p99_us: number; non2xx: number; errors: number };
  return { requests: j.requests, rps: j.requests / (j.duration_us / 1e6), p50: j.p50_us / 1000, p99: j.p99_us / 1000, non2xx: j.non2xx, errors: j.errors };
}
