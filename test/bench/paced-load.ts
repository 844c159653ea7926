/**
 * An open-loop load generator for "N people using a page": each session sends one request
 * every 1/PACE seconds on its own keep-alive connection, the sessions' phases spread evenly,
 * so requests arrive at a steady SESSIONS × PACE per second instead of in bursts. Latency is
 * measured from when a request was due, not when it went out: a session still waiting on its
 * last answer delays the next one, and that wait counts (no coordinated omission).
 * Runs as its own process (`tsx test/bench/paced-load.ts`) so its event loop never shares one
 * with the service; prints one line `PACED_JSON {...}`.
 * Env: PACED_URL, PACED_COOKIES (file, one cookie value per line), PACED_COOKIE_NAME,
 * PACED_SESSIONS, PACED_PACE (requests per session per second), PACED_SECONDS; PACED_PATHS
 * (file, one path per line, optional): the paths asked in turn across all sessions instead of
 * PACED_URL's own; PACED_BODIES (file, one JSON body per line, optional): each request a POST
 * of the next body to PACED_URL's path instead of a GET; PACED_WARMUP_S (default 0): seconds
 * asked first and not counted.
 */
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { percentile } from './stats.ts';

const url = new URL(process.env.PACED_URL!);
const cookies = readFileSync(process.env.PACED_COOKIES!, 'utf8').split('\n').filter(Boolean);
const cookieName = process.env.PACED_COOKIE_NAME ?? 'anm_session';
const SESSIONS = Number(process.env.PACED_SESSIONS ?? 100);
const PACE = Number(process.env.PACED_PACE ?? 2);
const SECONDS = Number(process.env.PACED_SECONDS ?? 10);
const paths = process.env.PACED_PATHS ? readFileSync(process.env.PACED_PATHS, 'utf8').split('\n').filter(Boolean) : [url.pathname + url.search];
const bodies = process.env.PACED_BODIES ? readFileSync(process.env.PACED_BODIES, 'utf8').split('\n').filter(Boolean) : undefined;
let asked = 0;

function get(agent: http.Agent, cookie: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const body = bodies?.[asked % bodies.length];
    const target = body === undefined ? new URL(paths[asked % paths.length]!, url) : url;
    asked++;
    const headers = { cookie: `${cookieName}=${cookie}`, ...(body !== undefined && { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) }) };
    const req = http.request(target, { agent, method: body === undefined ? 'GET' : 'POST', headers }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const latencies: number[] = [];
let non2xx = 0;
let errors = 0;
const periodMs = 1000 / PACE;
// The first second opens the connections and warms both sides' code; it is asked but not counted.
const WARMUP_MS = Number(process.env.PACED_WARMUP_S ?? 0) * 1000;
const start = performance.now() + 50;
const counted = start + WARMUP_MS;
const end = counted + SECONDS * 1000;

async function session(i: number): Promise<void> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const cookie = cookies[i % cookies.length]!;
  for (let due = start + (i * periodMs) / SESSIONS; due < end; due += periodMs) {
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    try {
      const status = await get(agent, cookie);
      if (due < counted) continue;
      if (status < 200 || status >= 300) non2xx++;
      latencies.push(performance.now() - due);
    } catch {
      errors++;
    }
  }
  agent.destroy();
}

await Promise.all(Array.from({ length: SESSIONS }, (_, i) => session(i)));
latencies.sort((a, b) => a - b);
const seconds = (performance.now() - counted) / 1000;
console.log(
  `PACED_JSON ${JSON.stringify({ requests: latencies.length, rps: latencies.length / seconds, p50: percentile(latencies, 50), p99: percentile(latencies, 99), non2xx, errors })}`,
);
