/**
 * The load generator of test/bench/request-load.ts for a count that must be exact, or where wrk
 * is not installed, in a process of its own: LOAD_REQUESTS requests from LOAD_FILE (its line
 * format) in order over LOAD_CONNECTIONS keep-alive connections to LOAD_URL, each connection
 * sending its next request when its last is answered, and not one request past the count;
 * prints one line `LOAD_JSON {...}`, with `sendCpuS`, its CPU seconds while sending.
 *
 * It shares two cores with the service it measures, so, as the paced generator (ADR 0066), every
 * request's bytes are encoded before the run and written raw on a `net` socket, and an answer is
 * read only as far as its status and its end (http-answers.ts).
 */
import { readFileSync } from 'node:fs';
import { connectAll, HttpAnswers } from './http-answers.ts';
import { percentile } from './stats.ts';

const url = new URL(process.env.LOAD_URL!);
const COUNT = Number(process.env.LOAD_REQUESTS);
const CONNECTIONS = Math.min(Number(process.env.LOAD_CONNECTIONS ?? 32), COUNT);
const lines = readFileSync(process.env.LOAD_FILE!, 'utf8').split('\n').filter(Boolean);
const encoded = lines.map((line) => {
  const [method, path, body, ...h] = line.split('\t');
  let head = `${method!} ${path!} HTTP/1.1\r\nhost: ${url.host}\r\n`;
  if (body) head += `content-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n`;
  for (let i = 0; i + 1 < h.length; i += 2) head += `${h[i]!}: ${h[i + 1]!}\r\n`;
  return Buffer.from(`${head}\r\n${body ?? ''}`);
});
const wire = Array.from({ length: COUNT }, (_, i) => encoded[i % encoded.length]!);

const sockets = await connectAll(url, CONNECTIONS);

const latencies = new Float64Array(COUNT);
let ok = 0;
let next = 0;
let non2xx = 0;
let errors = 0;
let live = CONNECTIONS;
let done!: () => void;
const finished = new Promise<void>((resolve) => (done = resolve));
/** Every request answered or lost, or no connection left to send the rest on (they count as errors). */
const settle = (): void => {
  if (ok + errors === COUNT) done();
  else if (live === 0) {
    errors += COUNT - next;
    next = COUNT;
    done();
  }
};

const starts: Array<() => void> = [];
for (const socket of sockets) {
  const answers = new HttpAnswers();
  let sentAt = 0;
  let inFlight = false;
  let gone = false;
  const send = (): void => {
    if (next >= COUNT) return;
    inFlight = true;
    sentAt = performance.now();
    socket.write(wire[next++]!);
  };
  socket.on('data', (chunk: Buffer) => {
    for (const status of answers.push(chunk)) {
      // An answer to no request (a server's 408 on an idle connection) is no request's.
      if (!inFlight) continue;
      inFlight = false;
      latencies[ok++] = performance.now() - sentAt;
      if (status < 200 || status >= 300) non2xx++;
      send();
      settle();
    }
  });
  // A connection lost or closed by the server: its request in flight is an error, and the
  // rest go out on the others.
  const lost = (): void => {
    if (gone) return;
    gone = true;
    live--;
    if (inFlight) {
      inFlight = false;
      errors++;
    }
    settle();
  };
  socket.on('error', lost);
  socket.on('close', lost);
  starts.push(send);
}

// The CPU of sending alone: the process's start (loading tsx, encoding) is no request's cost.
const cpu0 = process.cpuUsage();
const t0 = performance.now();
for (const start of starts) start();
await finished;
const seconds = (performance.now() - t0) / 1000;
const cpu = process.cpuUsage(cpu0);
for (const s of sockets) s.destroy();
const sorted = Array.from(latencies.subarray(0, ok)).sort((a, b) => a - b);
console.log(`LOAD_JSON ${JSON.stringify({ requests: ok, rps: ok / seconds, p50: percentile(sorted, 50), p99: percentile(sorted, 99), non2xx, errors, sendCpuS: (cpu.user + cpu.system) / 1e6 })}`);
