/**
 * Load from another process for a benchmark row of a fixed number of requests (bench:market):
 * the service keeps its process and event loop to itself, as in production, and its CPU per
 * request is read apart from the load generator's. The requests are written to a file, one a
 * line, and sent in order by wrk (test/bench/wrk/requests.lua) or, where wrk is not
 * installed, by test/bench/http-load.ts in a Node process of its own.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { runProcess } from '../helpers/cli.ts';
import { endedChildrenCpu } from './proc-cpu.ts';
import { runWrk, wrkInstalled, type LoadFigures } from './wrk.ts';

export interface LoadRequest {
  method: 'GET' | 'POST';
  /** Path and query string. */
  path: string;
  /** JSON text, sent as application/json. */
  body?: string;
  headers?: Record<string, string>;
}

export const LOAD_GENERATOR = wrkInstalled() ? 'wrk (one thread, another process)' : 'test/bench/http-load.ts (another Node process)';

/** Made at the first file written: a process that only reads one (http-load.ts) makes none. */
let dir: string | undefined;
let files = 0;

/** One request a line: method, path, body, header names and values, tab-separated (JSON text holds no raw tab or newline). */
function writeRequests(requests: readonly LoadRequest[]): string {
  dir ??= mkdtempSync(path.join(tmpdir(), 'bench-load-'));
  const file = path.join(dir, `requests-${files++}`);
  writeFileSync(file, requests.map((r) => [r.method, r.path, r.body ?? '', ...Object.entries(r.headers ?? {}).flat()].join('\t')).join('\n') + '\n');
  return file;
}

/** The requests of a file `writeRequests` wrote (http-load.ts reads them in its own process). */
export function readRequests(file: string): LoadRequest[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line): LoadRequest => {
      const [method, path, body, ...h] = line.split('\t');
      const headers: Record<string, string> = {};
      for (let i = 0; i + 1 < h.length; i += 2) headers[h[i]!] = h[i + 1]!;
      return { method: method as LoadRequest['method'], path: path!, ...(body ? { body } : {}), headers };
    });
}

/**
 * Sends `count` requests (`requests` in order, round robin past the end) over `connections`
 * keep-alive connections; `loadCpuS`: the load generator's CPU seconds. With wrk, requests
 * still in flight at the count are answered but not counted (at most `connections`); `exact`
 * sends the count and not one more (the Node generator), for rows whose CPU per request must
 * not carry those extra answers (a purchase's would be replays).
 * `sendCpuS` (the Node generator only): its CPU seconds while sending, without its start.
 */
export async function runRequests(o: { url: string; requests: readonly LoadRequest[]; count: number; connections: number; exact?: boolean }): Promise<LoadFigures & { loadCpuS: number; sendCpuS?: number }> {
  const file = writeRequests(o.requests);
  const cpu0 = endedChildrenCpu();
  const r = wrkInstalled() && !o.exact
    ? await runWrk({ url: o.url, script: 'requests', connections: o.connections, seconds: 3600, timeoutS: 60, env: { BENCH_REQUESTS_FILE: file, BENCH_REQUESTS: String(o.count) } })
    : await nodeLoad(o.url, file, o.count, o.connections);
  return { ...r, loadCpuS: endedChildrenCpu() - cpu0 };
}

async function nodeLoad(url: string, file: string, count: number, connections: number): Promise<LoadFigures & { sendCpuS: number }> {
  const r = await runProcess(process.execPath, ['--import', 'tsx', path.join(import.meta.dirname, 'http-load.ts')], {
    LOAD_URL: url,
    LOAD_FILE: file,
    LOAD_REQUESTS: String(count),
    LOAD_CONNECTIONS: String(connections),
  });
  const line = r.stdout.split('\n').find((l) => l.startsWith('LOAD_JSON '));
  if (r.code !== 0 || !line) throw new Error(`http-load exited with ${r.code}: ${r.stderr}`);
  return JSON.parse(line.slice('LOAD_JSON '.length)) as LoadFigures & { sendCpuS: number };
}
