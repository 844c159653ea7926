/**
 * An open-loop load generator for "N people using a page": each session sends one request
 * every 1/PACE seconds on its own keep-alive connection, the sessions' phases spread evenly,
 * so requests arrive at a steady SESSIONS × PACE per second instead of in bursts. Latency is
 * measured from when a request was due, not when it went out: a session still waiting on its
 * last answer delays the next one, and that wait counts (no coordinated omission).
 * Runs as its own process (`tsx test/bench/paced-load.ts`) so its event loop never shares one
 * with the service; prints one line `PACED_JSON {...}` (with `cpuMs`, its own CPU per request).
 *
 * It shares two cores with the service it measures, so it spends as little as it can per
 * request, as wrk does for the saturated rows: every request's bytes are encoded once before
 * the run, written raw on a `net` socket, and an answer is read only as far as its status and
 * its length (Content-Length or chunked); one timer walks the schedule for all sessions rather
 * than one timer, URL, header object and `http.ClientRequest` per request.
 * Env: PACED_URL, PACED_COOKIES (file, one cookie value per line), PACED_COOKIE_NAME,
 * PACED_SESSIONS, PACED_PACE (requests per session per second), PACED_SECONDS; PACED_PATHS
 * (file, one path per line, optional): the paths asked in turn across all sessions instead of
 * PACED_URL's own; PACED_BODIES (file, one JSON body per line, optional): each request a POST
 * of the next body to PACED_URL's path instead of a GET; PACED_IDEMPOTENCY_KEYS (a prefix,
 * optional): each body's POST carries `idempotency-key: <prefix><the body's line number>`, so
 * that distinct bodies are distinct requests (a purchase needs one); PACED_WARMUP_S (default
 * 0): seconds asked first and not counted.
 */
import { readFileSync } from 'node:fs';
import type { Socket } from 'node:net';
import { percentile } from './stats.ts';
import { connectAll, HttpAnswers } from './http-answers.ts';

const url = new URL(process.env.PACED_URL!);
const cookies = readFileSync(process.env.PACED_COOKIES!, 'utf8').split('\n').filter(Boolean);
const cookieName = process.env.PACED_COOKIE_NAME ?? 'anm_session';
const SESSIONS = Number(process.env.PACED_SESSIONS ?? 100);
const PACE = Number(process.env.PACED_PACE ?? 2);
const SECONDS = Number(process.env.PACED_SECONDS ?? 10);
const paths = process.env.PACED_PATHS ? readFileSync(process.env.PACED_PATHS, 'utf8').split('\n').filter(Boolean) : [url.pathname + url.search];
const bodies = process.env.PACED_BODIES ? readFileSync(process.env.PACED_BODIES, 'utf8').split('\n').filter(Boolean) : undefined;
const WARMUP_MS = Number(process.env.PACED_WARMUP_S ?? 0) * 1000;
const keyPrefix = process.env.PACED_IDEMPOTENCY_KEYS;

const hostHeader = `host: ${url.host}\r\n`;
// Each session's cookie differs, so a request's bytes are (what is asked, whose cookie): the
// asked part once per path or body, the cookie line once per session.
const cookieLines = Array.from({ length: SESSIONS }, (_, i) => `cookie: ${cookieName}=${cookies[i % cookies.length]!}\r\n`);
const asks = (bodies ?? paths).map((x, i) =>
  bodies
    ? { head: `POST ${url.pathname + url.search} HTTP/1.1\r\n${hostHeader}content-type: application/json\r\ncontent-length: ${Buffer.byteLength(x)}\r\n${keyPrefix === undefined ? '' : `idempotency-key: ${keyPrefix}${i}\r\n`}`, body: x }
    : { head: `GET ${new URL(x, url).pathname + new URL(x, url).search} HTTP/1.1\r\n${hostHeader}`, body: '' },
);
const encoded = (i: number, session: number): Buffer => {
  const a = asks[i % asks.length]!;
  return Buffer.from(`${a.head}${cookieLines[session]!}\r\n${a.body}`);
};

const periodMs = 1000 / PACE;
const step = periodMs / SESSIONS;
const total = Math.ceil((WARMUP_MS + SECONDS * 1000) / step);
// Every request's bytes before the clock starts: the run itself only writes them.
const wire = Array.from({ length: total }, (_, n) => encoded(n, n % SESSIONS));
const latencies = new Float64Array(total);
let counted = 0;
let non2xx = 0;
let errors = 0;

interface Session {
  socket: Socket;
  answers: HttpAnswers;
  /** Due times of this client's requests not yet answered, the one on the wire first. */
  due: number[];
  /** Their indexes in `wire`. */
  index: number[];
}

const sessions: Session[] = (await connectAll(url, SESSIONS)).map((socket) => ({ socket, answers: new HttpAnswers(), due: [], index: [] }));

const start = performance.now() + 50;
const countFrom = start + WARMUP_MS;
let done!: () => void;
const finished = new Promise<void>((resolve) => (done = resolve));
let outstanding = total;

const settle = (): void => {
  if (--outstanding === 0) done();
};
for (const s of sessions) {
  s.socket.on('data', (chunk: Buffer) => {
    for (const status of s.answers.push(chunk)) {
      const due = s.due.shift()!;
      s.index.shift();
      if (due >= countFrom) {
        if (status < 200 || status >= 300) non2xx++;
        latencies[counted++] = performance.now() - due;
      }
      // The next request of this client, if it fell due while this one was on the wire.
      if (s.index.length > 0) s.socket.write(wire[s.index[0]!]!);
      settle();
    }
  });
  // A connection lost or closed by the server: what its session still had waiting counts as
  // errors, and so does what falls due on it later (the tick sees it destroyed).
  const lost = (): void => {
    errors += s.due.length;
    for (let k = s.due.length; k > 0; k--) settle();
    s.due.length = 0;
    s.index.length = 0;
  };
  s.socket.on('error', lost);
  s.socket.on('close', lost);
}

// One timer for all sessions: request n is due at start + n × step, on session n mod SESSIONS.
let next = 0;
function tick(): void {
  const now = performance.now();
  for (; next < total && start + next * step <= now; next++) {
    const s = sessions[next % SESSIONS]!;
    if (s.socket.destroyed) {
      errors++;
      settle();
      continue;
    }
    s.due.push(start + next * step);
    s.index.push(next);
    if (s.index.length === 1) s.socket.write(wire[next]!);
  }
  if (next < total) setTimeout(tick, Math.max(0, start + next * step - performance.now()));
}
const cpu0 = process.cpuUsage();
setTimeout(tick, Math.max(0, start - performance.now()));
await finished;
const cpu = process.cpuUsage(cpu0);
const seconds = (performance.now() - countFrom) / 1000;
for (const s of sessions) s.socket.destroy();
const sorted = Array.from(latencies.subarray(0, counted)).sort((a, b) => a - b);
console.log(
  `PACED_JSON ${JSON.stringify({ requests: counted, rps: counted / seconds, p50: percentile(sorted, 50), p99: percentile(sorted, 99), non2xx, errors, cpuMs: (cpu.user + cpu.system) / 1000 / total })}`,
);
