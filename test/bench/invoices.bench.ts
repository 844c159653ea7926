/**
 * `npm run bench:invoices`: the hosted invoice page `GET /i/{token}` (issue 23 "Speed": p99
 * <= 20 ms) on real PostgreSQL + NATS, over 200 open invoices of 10 merchants, with the
 * checkout page `GET /c/{id}` measured the same way in the same run as the yardstick. The
 * service runs in this process (startServices), autocannon beside it: the figures include the
 * load generator's CPU on the same cores. Each page is measured saturated (50 connections, the
 * next request the moment one answers: the ceiling, whose p99 is queueing) and paced
 * (BENCH_RATE requests per second in total: the latency a customer sees when the service is
 * not the bottleneck).
 * Env: BENCH_SECONDS (10), BENCH_CONNECTIONS (50), BENCH_RATE (500).
 */
import autocannon from 'autocannon';
import { startDashHarness } from '../dashboard/harness.ts';
import { postgresReachable, DATABASE_URL } from '../helpers/backends.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const RATE = Number(process.env.BENCH_RATE ?? 500);

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

  const results: Array<{ page: string; mode: string; rps: number; p50: number; p99: number; non2xx: number }> = [];
  for (const [name, paths] of [
    ['/i/{token}', pages],
    ['/c/{id}', intents],
  ] as const) {
    for (const paced of [false, true]) {
      let n = 0;
      const r = await autocannon({
        url: h.svc,
        connections: CONNECTIONS,
        duration: SECONDS,
        ...(paced ? { overallRate: RATE } : {}),
        requests: [{ setupRequest: (req) => ({ ...req, method: 'GET', path: paths[n++ % paths.length]! }) }],
      });
      results.push({ page: name, mode: paced ? `paced ${RATE}/s` : 'saturated', rps: Math.round(r.requests.average), p50: r.latency.p50, p99: r.latency.p99, non2xx: r.non2xx });
    }
  }
  console.log(`\nbench:invoices, ${pages.length} invoice pages and ${intents.length} checkout pages, ${CONNECTIONS} connections, ${SECONDS}s each (autocannon in the same process)`);
  for (const r of results) console.log(`  GET ${r.page.padEnd(11)} ${r.mode.padEnd(12)} ${String(r.rps).padStart(6)}/s  p50 ${r.p50} ms  p99 ${r.p99} ms  non-2xx ${r.non2xx}`);
  const [inv, chk] = [results[0]!, results[2]!];
  console.log(`  saturated rate, invoice page / checkout page: ${(inv.rps / chk.rps).toFixed(2)}`);
} finally {
  await h.close();
}
