/**
 * `npm run bench:invoices`: the hosted invoice page `GET /i/{token}` (issue 23 "Speed": p99
 * <= 20 ms) on real PostgreSQL + NATS, over 200 open invoices of 10 merchants, with the
 * checkout page `GET /c/{id}` measured the same way in the same run as the yardstick. The
 * service runs in this process (startServices). Each page is measured saturated (autocannon in
 * this process over every page in turn, 50 connections, the next request the moment one
 * answers: the ceiling, whose p99 is queueing and includes the generator's CPU) and paced
 * (test/bench/paced-load.ts in its own process: BENCH_SESSIONS customers each asking every
 * 1/BENCH_PACE s, latency counted from when a request was due: what a customer sees when the
 * service is not the bottleneck).
 * Env: BENCH_SECONDS (10), BENCH_CONNECTIONS (50), BENCH_SESSIONS (50), BENCH_PACE (4).
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import autocannon from 'autocannon';
import { startDashHarness } from '../dashboard/harness.ts';
import { postgresReachable, DATABASE_URL } from '../helpers/backends.ts';
import { runPaced, type Figures } from './paced-run.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const SESSIONS = Number(process.env.BENCH_SESSIONS ?? 50);
const PACE = Number(process.env.BENCH_PACE ?? 4);

/** One page, each session once every 1/PACE s, from a child process. */
function paced(url: string, cookieFile: string): Promise<Figures> {
  return runPaced(url, cookieFile, { sessions: SESSIONS, pace: PACE, seconds: SECONDS });
}

if (!(await postgresReachable())) {
  console.error(`bench:invoices needs PostgreSQL (${DATABASE_URL})`);
  process.exit(1);
}
process.env.ANMPAY_TEST_REAL = '1';

// Every request comes from 127.0.0.1: the per-IP bucket is raised so it measures pages, not 429s.
const h = await startDashHarness({ RATE_LIMIT_IP_PER_MIN: '100000000', RATE_LIMIT_IP_BURST: '100000000', DATABASE_POOL_SIZE: '16' });
try {
  const merchants = await Promise.all(Array.from({ length: 10 }, (_, i) => h.merchant(`Invoice bench ${i}`)));
  const call = async (key: string, path: string, body?: unknown) => {
    const r = await fetch(`${h.svc}${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, ...(body ? { body: JSON.stringify(body) } : {}) });
    if (!r.ok) throw new Error(`${path}: ${r.status} ${await r.text()}`);
    return (await r.json()) as { id: string; hosted_url: string };
  };
  const pages: string[] = [];
  const intents: string[] = [];
  for (const [i, m] of merchants.entries()) {
    const key = m.keys.test.secret;
    for (let n = 0; n < 20; n++) {
      const lines = Array.from({ length: 5 }, (_, j) => ({ description: `Item ${j} of invoice ${n} <b>${i}</b>`, quantity: j + 1, unit_price: '1.25' }));
      const d = await call(key, '/api/v1/invoices', { customer_name: `Customer ${n}`, due_at: '2031-01-01', line_items: lines });
      pages.push(new URL((await call(key, `/api/v1/invoices/${d.id}/finalize`)).hosted_url).pathname);
    }
    for (let n = 0; n < 20; n++) intents.push(`/c/${(await h.intent(key, { amount: '6.25', description: `Order ${n}` })).id}`);
  }

  // The generator sends a session cookie; these public pages ignore it.
  const cookieFile = path.join(h.dataDir, 'bench-cookies.txt');
  await writeFile(cookieFile, 'none\n');
  const results: Array<Figures & { page: string; mode: string }> = [];
  for (const [name, paths] of [
    ['/i/{token}', pages],
    ['/c/{id}', intents],
  ] as const) {
    let n = 0;
    const r = await autocannon({
      url: h.svc,
      connections: CONNECTIONS,
      duration: SECONDS,
      requests: [{ setupRequest: (req) => ({ ...req, method: 'GET', path: paths[n++ % paths.length]! }) }],
    });
    results.push({ page: name, mode: 'saturated', rps: Math.round(r.requests.average), p50: r.latency.p50, p99: r.latency.p99, non2xx: r.non2xx });
    results.push({ page: name, mode: `paced ${SESSIONS * PACE}/s`, ...(await paced(`${h.svc}${paths[0]!}`, cookieFile)) });
  }
  console.log(`\nbench:invoices, ${pages.length} invoice pages and ${intents.length} checkout pages, ${SECONDS}s per run`);
  for (const r of results) console.log(`  GET ${r.page.padEnd(11)} ${r.mode.padEnd(12)} ${String(r.rps).padStart(6)}/s  p50 ${r.p50} ms  p99 ${r.p99} ms  non-2xx ${r.non2xx}`);
  const [inv, chk] = [results[0]!, results[2]!];
  console.log(`  saturated rate, invoice page / checkout page: ${(inv.rps / chk.rps).toFixed(2)}`);
} finally {
  await h.close();
}
