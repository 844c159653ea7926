/**
 * The load generator of `bench:purchase`, in a process of its own so that its CPU does not
 * count against the service's: reads the prepared purchases from the file named by argv[2],
 * posts them over keep-alive HTTP with argv[3] in flight, and prints the latencies' summary
 * as one line of JSON.
 */
import http from 'node:http';
import { readFileSync } from 'node:fs';
import { drive } from './stats.ts';

interface Job {
  url: string;
  requests: Array<{ key: string; body: string }>;
}

const job = JSON.parse(readFileSync(process.argv[2]!, 'utf8')) as Job;
const conc = Number(process.argv[3] ?? 32);
const agent = new http.Agent({ keepAlive: true, maxSockets: conc });
const u = new URL(job.url);
const statuses = new Map<number, number>();

function post(body: string, key: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const r = http.request({ method: 'POST', hostname: u.hostname, port: u.port, path: u.pathname, agent, headers: { 'content-type': 'application/json', 'idempotency-key': key } }, (res) => {
      res.resume();
      res.on('end', () => {
        statuses.set(res.statusCode ?? 0, (statuses.get(res.statusCode ?? 0) ?? 0) + 1);
        resolve();
      });
    });
    r.on('error', reject);
    r.end(body);
  });
}

const stats = await drive(job.requests.length, conc, (i) => post(job.requests[i]!.body, job.requests[i]!.key));
process.stdout.write(`${JSON.stringify({ ...stats, statuses: Object.fromEntries(statuses) })}\n`);
agent.destroy();
