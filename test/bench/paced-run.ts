/**
 * Runs test/bench/paced-load.ts in its own process against one URL and reads its figures:
 * SESSIONS clients each asking every 1/PACE s (a GET of each path in turn, or a POST of each
 * body in turn, each with an idempotency key of its own if asked), latency counted from when a
 * request was due.
 */
import path from 'node:path';
import { runProcess } from '../helpers/cli.ts';
import { endedChildrenCpu } from './proc-cpu.ts';

export type Figures = { rps: number; p50: number; p99: number; non2xx: number };

export async function runPaced(url: string, cookieFile: string, o: { sessions: number; pace: number; seconds: number; pathsFile?: string; bodiesFile?: string; warmupS?: number; idempotencyKeys?: string }): Promise<Figures & { loadMs: number }> {
  // loadMs: the generator process's CPU per request asked (warm-up included), its start-up and all.
  const cpu0 = endedChildrenCpu();
  const r = await runProcess(process.execPath, ['--import', 'tsx', path.join(import.meta.dirname, 'paced-load.ts')], {
    ...process.env,
    PACED_URL: url,
    PACED_COOKIES: cookieFile,
    PACED_SESSIONS: String(o.sessions),
    PACED_PACE: String(o.pace),
    PACED_SECONDS: String(o.seconds),
    ...(o.pathsFile && { PACED_PATHS: o.pathsFile }),
    ...(o.bodiesFile && { PACED_BODIES: o.bodiesFile }),
    ...(o.warmupS && { PACED_WARMUP_S: String(o.warmupS) }),
    ...(o.idempotencyKeys !== undefined && { PACED_IDEMPOTENCY_KEYS: o.idempotencyKeys }),
  });
  const line = r.stdout.split('\n').find((l) => l.startsWith('PACED_JSON '));
  if (r.code !== 0 || !line) throw new Error(`paced load exited with ${r.code}: ${r.stderr}`);
  const j = JSON.parse(line.slice('PACED_JSON '.length)) as Figures & { errors: number };
  const asked = Math.round(o.sessions * o.pace * (o.seconds + (o.warmupS ?? 0)));
  const loadMs = ((endedChildrenCpu() - cpu0) * 1000) / asked;
  return { rps: Math.round(j.rps), p50: Number(j.p50.toFixed(1)), p99: Number(j.p99.toFixed(1)), non2xx: j.non2xx + j.errors, loadMs };
}
