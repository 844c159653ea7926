/**
 * `npm run bench:dashboard`: the dashboard's pages and JSON reads at 100 concurrent sessions
 * on real PostgreSQL + NATS (issue 22 "Speed": p99 <= 50 ms), a payment's timeline of 1,000
 * journal entries (< 100 ms), and 500 open timeline streams (no database statement per stream
 * once open, measured as the checkout SSE test does: statements counted while one event fans
 * out to every stream). The service runs in this process (startServices); the load comes from
 * another process, so its event loop never delays the service's (it still shares the cores).
 * Each path is measured twice: saturated (wrk: every session sends its next request the moment
 * the last one answers: the ceiling, whose p99 is queueing) and paced (test/bench/paced-load.ts:
 * each session BENCH_PACE requests per second, evenly spread, far busier than a person
 * clicking; latency counted from when a request was due: the latency a session sees).
 * Env: BENCH_SECONDS (10), BENCH_SESSIONS (100), BENCH_STREAMS (500), BENCH_PACE (2).
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { dashClient, startDashHarness, type DashClient } from '../dashboard/harness.ts';
import { postgresReachable, DATABASE_URL } from '../helpers/backends.ts';
import { runPaced, type Figures } from './paced-run.ts';
import { runWrk, wrkInstalled } from './wrk.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const SESSIONS = Number(process.env.BENCH_SESSIONS ?? 100);
const STREAMS = Number(process.env.BENCH_STREAMS ?? 500);
const PACE = Number(process.env.BENCH_PACE ?? 2);


/** Every session sends its next request the moment the last one answers (wrk, or autocannon without it). */
async function saturated(p: string, cookieFile: string): Promise<Figures> {
  if (wrkInstalled()) {
    const r = await runWrk({ url: `${h.svc}${p}`, script: 'session', connections: SESSIONS, seconds: SECONDS, env: { BENCH_COOKIES: cookieFile, BENCH_PATH: p } });
    return { rps: Math.round(r.rps), p50: r.p50, p99: r.p99, non2xx: r.non2xx };
  }
  const cookies = readFileSync(cookieFile, 'utf8').split('\n');
  let n = 0;
  const r = await autocannon({
    url: `${h.svc}${p}`,
    connections: SESSIONS,
    duration: SECONDS,
    requests: [{ setupRequest: (req) => ({ ...req, headers: { ...req.headers, cookie: `anm_session=${cookies[n++ % cookies.length]!}` } }) }],
  });
  return { rps: Math.round(r.requests.average), p50: r.latency.p50, p99: r.latency.p99, non2xx: r.non2xx };
}

/** Each session once every 1/PACE s, evenly spread, from a child process (test/bench/paced-load.ts). */
function pacedLoad(p: string, cookieFile: string): Promise<Figures> {
  return runPaced(`${h.svc}${p}`, cookieFile, { sessions: SESSIONS, pace: PACE, seconds: SECONDS });
}

if (!(await postgresReachable())) {
  console.error(`bench:dashboard needs PostgreSQL (${DATABASE_URL})`);
  process.exit(1);
}
process.env.ANMPAY_TEST_REAL = '1';

// Every session comes from 127.0.0.1: the per-IP bucket is raised so it measures reads, not 429s.
const h = await startDashHarness({ RATE_LIMIT_IP_PER_MIN: '100000000', RATE_LIMIT_IP_BURST: '100000000', DATABASE_POOL_SIZE: '16' });
try {
  const merchants = await Promise.all(Array.from({ length: 10 }, (_, i) => h.merchant(`Bench ${i}`)));
  for (const m of merchants) for (let i = 0; i < 30; i++) await h.intent(m.keys.test.secret, { amount: '1.5', merchant_order_id: `o-${i}` });
  const clients: DashClient[] = [];
  for (let i = 0; i < SESSIONS; i++) {
    const m = merchants[i % merchants.length]!;
    const c = dashClient(h.svc);
    await c.login(m.dashboard.email, m.dashboard.password);
    clients.push(c);
  }

  const paths = ['/dashboard/api/home', '/dashboard/api/payments', '/dashboard/api/keys', '/dashboard'];
  const cookieFile = path.join(mkdtempSync(path.join(tmpdir(), 'bench-dash-')), 'cookies');
  writeFileSync(cookieFile, clients.map((c) => c.cookie).join('\n'));
  const results: Array<{ path: string; mode: string; rps: number; p50: number; p99: number; non2xx: number }> = [];
  for (const p of paths) {
    const sat = await saturated(p, cookieFile);
    results.push({ path: p, mode: 'saturated', ...sat });
    const paced = await pacedLoad(p, cookieFile);
    results.push({ path: p, mode: `paced ${SESSIONS * PACE}/s`, ...paced });
  }

  // A timeline of 1,000 journal entries: one intent, its journal padded with ignored-looking rows.
  const owner = merchants[0]!;
  const big = await h.intent(owner.keys.test.secret, { amount: '2' });
  await h.services.db.query(
    `INSERT INTO actor_events (actor_id, seq, event_id, event, state_before, state_after, at)
     SELECT $1, g, 'bench:' || g, jsonb_build_object('type', 'chain.block', 'height', g), 'AWAITING_PAYMENT', 'AWAITING_PAYMENT', now()
       FROM generate_series(2, 1000) g`,
    [big.id],
  );
  const c = clients[0]!;
  const times: number[] = [];
  for (let i = 0; i < 50; i++) {
    const t = performance.now();
    const r = await c.req('GET', `/dashboard/api/payments/${big.id}`);
    times.push(performance.now() - t);
    if ((r.json.timeline as unknown[]).length !== 1000) throw new Error('timeline is not 1,000 entries');
  }
  times.sort((a, b) => a - b);

  // Streams: commits of the whole database over 3 s with none open, then with all open (the
  // service's own pollers commit in both), then one event fanned out to every stream.
  const xact = async () => Number((await h.services.db.query<{ n: string }>(`SELECT xact_commit::text AS n FROM pg_stat_database WHERE datname = current_database()`)).rows[0]!.n);
  const commitsIn = async (ms: number) => {
    const before = await xact();
    await new Promise((r) => setTimeout(r, ms));
    return (await xact()) - before;
  };
  const baseline = await commitsIn(3000);
  const fan = await h.intent(owner.keys.test.secret, { amount: '3' });
  const agent = new http.Agent({ keepAlive: true, maxSockets: STREAMS + 10 });
  let got = 0;
  const reqs: http.ClientRequest[] = [];
  await Promise.all(
    Array.from({ length: STREAMS }, (_, i) => {
      return new Promise<void>((resolve, reject) => {
        const cookie = clients[(i % (SESSIONS / merchants.length)) * merchants.length]!.cookie;
        const req = http.get(`${h.svc}/dashboard/api/payments/${fan.id}/events`, { agent, headers: { cookie: `anm_session=${cookie}` } }, (res) => {
          if (res.statusCode !== 200) return reject(new Error(`stream ${res.statusCode}`));
          res.on('data', (d: Buffer) => {
            if (d.toString().includes('event: entry')) got++;
          });
          resolve();
        });
        req.on('error', reject);
        reqs.push(req);
      });
    }),
  );
  // The opens' own work (session lookups, the rate limiter's lease sweep) finishes first: the
  // window then holds only what open streams cost while nothing happens, which should be nothing.
  const settling = await commitsIn(3000);
  const idleCommits = await commitsIn(3000);
  await h.services.engine.host.apply({ kind: 'payment_intent', id: fan.id }, { type: 'intent.cancel', id: `bench-${randomBytes(4).toString('hex')}`, at: Date.now() });
  const fanStart = performance.now();
  while (got < STREAMS && performance.now() - fanStart < 10_000) await new Promise((r) => setTimeout(r, 20));
  const fanMs = performance.now() - fanStart;
  for (const r of reqs) r.destroy();
  agent.destroy();

  console.log(`\nbench:dashboard, ${SESSIONS} sessions over ${merchants.length} merchants, ${SECONDS}s per path (load from a separate process)`);
  for (const r of results) console.log(`  GET ${r.path.padEnd(26)} ${r.mode.padEnd(12)} ${String(r.rps).padStart(6)}/s  p50 ${r.p50} ms  p99 ${r.p99} ms  non-2xx ${r.non2xx}`);
  console.log(`  timeline of 1,000 entries: p50 ${times[25]!.toFixed(1)} ms, p99 ${times[49]!.toFixed(1)} ms (50 reads)`);
  console.log(
    `  timeline streams: database commits in 3 s with none open ${baseline}; with ${STREAMS} open: ${settling} in the 3 s after opening, then ${idleCommits}; one event reached ${got}/${STREAMS} streams in ${fanMs.toFixed(0)} ms`,
  );
} finally {
  await h.close();
}
