/**
 * The exact load generator: `wire.length` requests, their bytes encoded beforehand, written in
 * order on raw keep-alive sockets, each connection sending its next request when its last is
 * answered, and not one request past the count. An answer is read only as far as its status
 * and its end (http-answers.ts). It shares two cores with the service it measures, so it does
 * as little per request as it can (as the paced generator, ADR 0066): about 0.07 ms of CPU,
 * against about 0.2 for a `node:http` client. Run in a process of its own by http-load.ts, or
 * in the bench's process (bench:execute's BENCH_LOAD=here).
 */
import type { LoadRequest } from './request-load.ts';
import type { LoadFigures } from './wrk.ts';
import { connectAll, HttpAnswers } from './http-answers.ts';
import { percentile } from './stats.ts';

/** Each request's bytes, as sent to `url`'s host. */
export function encodeRequests(url: URL, requests: readonly LoadRequest[]): Buffer[] {
  return requests.map((r) => {
    let head = `${r.method} ${r.path} HTTP/1.1\r\nhost: ${url.host}\r\n`;
    if (r.body) head += `content-type: application/json\r\ncontent-length: ${Buffer.byteLength(r.body)}\r\n`;
    for (const [name, value] of Object.entries(r.headers ?? {})) head += `${name}: ${value}\r\n`;
    return Buffer.from(`${head}\r\n${r.body ?? ''}`);
  });
}

/** Sends every request of `wire` once; `sendCpuS`: this process's CPU seconds while sending (the connections' opening excluded). */
export async function sendExact(url: URL, wire: readonly Buffer[], connections: number): Promise<LoadFigures & { sendCpuS: number }> {
  const count = wire.length;
  if (count === 0) return { requests: 0, rps: 0, p50: 0, p99: 0, non2xx: 0, errors: 0, sendCpuS: 0 };
  const sockets = await connectAll(url, Math.min(connections, count));
  const latencies = new Float64Array(count);
  let ok = 0;
  let next = 0;
  let non2xx = 0;
  let errors = 0;
  let live = sockets.length;
  let done!: () => void;
  const finished = new Promise<void>((resolve) => (done = resolve));
  /** Every request answered or lost, or no connection left to send the rest on (they count as errors). */
  const settle = (): void => {
    if (ok + errors === count) done();
    else if (live === 0) {
      errors += count - next;
      next = count;
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
      if (next >= count) return;
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

  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  for (const start of starts) start();
  await finished;
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  for (const s of sockets) s.destroy();
  const sorted = Array.from(latencies.subarray(0, ok)).sort((a, b) => a - b);
  return { requests: ok, rps: ok / seconds, p50: percentile(sorted, 50), p99: percentile(sorted, 99), non2xx, errors, sendCpuS: (cpu.user + cpu.system) / 1e6 };
}
