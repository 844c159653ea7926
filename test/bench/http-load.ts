/**
 * The load generator of test/bench/request-load.ts where wrk is not installed, in a process of
 * its own: LOAD_REQUESTS requests from LOAD_FILE (its line format) in order over
 * LOAD_CONNECTIONS keep-alive connections to LOAD_URL; prints one line `LOAD_JSON {...}`, with
 * `sendCpuS`, its CPU seconds while sending.
 */
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { drive } from './stats.ts';

const url = new URL(process.env.LOAD_URL!);
const COUNT = Number(process.env.LOAD_REQUESTS);
const CONNECTIONS = Number(process.env.LOAD_CONNECTIONS ?? 32);
const requests = readFileSync(process.env.LOAD_FILE!, 'utf8')
  .split('\n')
  .filter(Boolean)
  .map((line) => {
    const [method, path, body, ...h] = line.split('\t');
    const headers: Record<string, string> = body ? { 'content-type': 'application/json' } : {};
    for (let i = 0; i + 1 < h.length; i += 2) headers[h[i]!] = h[i + 1]!;
    return { method: method!, path: path!, body: body || undefined, headers };
  });

const agent = new http.Agent({ keepAlive: true, maxSockets: CONNECTIONS });
let non2xx = 0;
let errors = 0;
function send(i: number): Promise<void> {
  const r = requests[i % requests.length]!;
  return new Promise((resolve) => {
    const req = http.request({ method: r.method, hostname: url.hostname, port: url.port, path: r.path, agent, headers: r.headers }, (res) => {
      if (!res.statusCode || res.statusCode < 200 || res.statusCode >= 300) non2xx++;
      res.resume();
      res.on('end', resolve);
    });
    req.on('error', () => {
      errors++;
      resolve();
    });
    req.end(r.body);
  });
}

// The CPU of sending alone: the process's start (loading tsx, compiling) is no request's cost.
const cpu0 = process.cpuUsage();
const s = await drive(COUNT, CONNECTIONS, send);
const cpu = process.cpuUsage(cpu0);
agent.destroy();
console.log(`LOAD_JSON ${JSON.stringify({ requests: s.ops, rps: s.rate, p50: s.p50, p99: s.p99, non2xx, errors, sendCpuS: (cpu.user + cpu.system) / 1e6 })}`);
