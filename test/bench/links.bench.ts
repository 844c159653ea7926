/**
 * `npm run bench:links`: buyers pressing Pay on payment links (`POST /p/{handle}/{slug}`, issue
 * 23 "Speed": at least 1,000/s with holds on real PostgreSQL), against the intent create route
 * (`POST /api/v1/payment-intents`) in the same run, on the same server process (test/bench/
 * api-server.ts with BENCH_LINKS=1: engine, outbox relay to NATS, hold follower). Each press
 * is the link's lookup with the buyer's Pay token, a take on the link actor (its row is the one
 * counter; takes that wait for one in flight share the next write, ADR 0053), the intent's
 * create, then a 303; the hold actor is created after it from the take's outbox row (ADR 0047). Load is spread over BENCH_MERCHANTS links (one
 * per merchant, units enough for the run); the per-IP limit of Pay and the API's buckets are
 * raised through configuration, so the figures are the cost of the full path, not of 429s.
 * Each measurement waits for every hold before its last reading, and prints CPU (server,
 * PostgreSQL, nats-server) and SQL statements per request. After the run the holds are
 * counted: every 303 has its hold and the links' counts equal them. Also the product page
 * `GET /p/{handle}/{slug}` (p99 target 20 ms), saturated and paced (BENCH_SESSIONS clients in
 * another process, each every 1/BENCH_PACE s). Load by wrk when installed, else autocannon in
 * this process. Env: BENCH_SECONDS (10), BENCH_CONNECTIONS (48), BENCH_MERCHANTS (8),
 * BENCH_LOADGEN (wrk | autocannon), BENCH_SESSIONS (50), BENCH_PACE (4).
 */
import { databaseTransport } from './bench-env.ts';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { createInterface } from 'node:readline';
import autocannon from 'autocannon';
import { Merchants } from '../../runtime/merchant/merchants.ts';
import { openDb } from '../../storage/open.ts';
import { DATABASE_URL, postgresReachable, uniqueName, waitFor } from '../helpers/backends.ts';
import { natsServerPid, procCpu } from './proc-cpu.ts';
import { runPaced } from './paced-run.ts';
import { runWrk, wrkInstalled, type LoadFigures } from './wrk.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 48);
const MERCHANTS = Number(process.env.BENCH_MERCHANTS ?? 8);
const LIMIT = '100000000';
const USE_WRK = (process.env.BENCH_LOADGEN ?? (wrkInstalled() ? 'wrk' : 'autocannon')) === 'wrk';

if (!(await postgresReachable())) {
  console.error(`bench:links needs PostgreSQL (${DATABASE_URL})`);
  process.exit(1);
}

const schema = uniqueName('bench_links');
const APP = uniqueName('anmpay_bench_links');
const pepper = randomBytes(32).toString('hex');
const db = await openDb({ databaseUrl: DATABASE_URL, schema });
const merchants = new Merchants(db, Buffer.from(pepper, 'utf8'));
const made = await Promise.all(Array.from({ length: MERCHANTS }, (_, i) => merchants.create({ name: `Links ${i}` })));
for (const m of made) await merchants.setPayoutAddress(m.merchant_id, 'live', `anm1benchpayout${m.merchant_id.slice(4)}`);

const child = spawn(process.execPath, ['--max-semi-space-size=32', '--import', 'tsx', 'test/bench/api-server.ts'], {
  env: {
    ...process.env,
    BENCH_LINKS: '1',
    BENCH_SCHEMA: schema,
    BENCH_NAMESPACE: uniqueName('bench'),
    ANMPAY_KEY_PEPPER: pepper,
    PGAPPNAME: APP,
    ANMPAY_OPERATOR_TOKEN: `opt_${randomBytes(16).toString('hex')}`,
    ANMPAY_LINK_PAY_PER_MIN: LIMIT,
    RATE_LIMIT_KEY_PER_MIN: LIMIT,
    RATE_LIMIT_KEY_BURST: LIMIT,
    RATE_LIMIT_IP_PER_MIN: LIMIT,
    RATE_LIMIT_IP_BURST: LIMIT,
  },
  stdio: ['ignore', 'pipe', 'inherit'],
});
const urls = await new Promise<{ api: string; bare: string }>((resolve, reject) => {
  createInterface({ input: child.stdout }).once('line', (l) => resolve(JSON.parse(l) as { api: string; bare: string }));
  child.once('exit', (code) => reject(new Error(`server exited with ${code}`)));
});

const keys = made.map((m) => m.keys.live.secret);
const links: Array<{ id: string; path: string }> = [];
for (const [i, key] of keys.entries()) {
  const r = await fetch(`${urls.api}/api/v1/payment-links`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ slug: 'bench', title: `Bench ${i}`, amount: '1.25', units_total: 1_000_000_000 }) });
  const j = (await r.json()) as { id: string; url: string };
  links.push({ id: j.id, path: new URL(j.url).pathname });
}

const natsPid = natsServerPid();
/** Write syscalls the server process made so far (socket writes to PostgreSQL, NATS and the clients): no load moves their count per request. */
const serverWrites = () => {
  try {
    return Number(/syscw: (\d+)/.exec(readFileSync(`/proc/${child.pid}/io`, 'utf8'))?.[1] ?? 0);
  } catch {
    return 0;
  }
};
const serverReading = async () => {
  const u = (await (await fetch(`${urls.bare}/cpu`)).json()) as { user: number; system: number; statements: number };
  return { cpu: (u.user + u.system) / 1e6, statements: u.statements };
};
/** CPU seconds of the server's PostgreSQL backends over a run (pool connections come and go). */
async function pgCpu<T>(work: Promise<T>): Promise<{ out: T; pg: number }> {
  const first = new Map<number, number>();
  const last = new Map<number, number>();
  const sample = async () => {
    const { rows } = await db.query<{ pid: number }>(`SELECT pid FROM pg_stat_activity WHERE application_name = $1`, [APP]);
    for (const { pid } of rows) {
      const v = procCpu(pid);
      if (!first.has(pid)) first.set(pid, v);
      last.set(pid, v);
    }
  };
  await sample();
  const timer = setInterval(() => void sample().catch(() => undefined), 200);
  const out = await work;
  clearInterval(timer);
  await sample();
  return { out, pg: [...last].reduce((a, [pid, v]) => a + v - (first.get(pid) ?? v), 0) };
}

interface Row {
  name: string;
  rps: number;
  p50: number;
  p99: number;
  ok: number;
  other: number;
  cpuMs: number;
  pgMs: number;
  natsMs: number;
  statements: number;
  writes: number;
}

type Load = (seconds: number) => Promise<LoadFigures & { ok: number }>;

function autocannonLoad(okClass: '2xx' | '3xx', req: autocannon.Request): Load {
  return async (seconds) => {
    const r = await autocannon({ url: urls.api, connections: CONNECTIONS, duration: seconds, requests: [req] });
    return { requests: r.requests.total, rps: r[okClass] / seconds, p50: r.latency.p50, p99: r.latency.p99, non2xx: r.requests.total - r[okClass], errors: r.errors + r.timeouts, ok: r[okClass] };
  };
}

function wrkLoad(script: 'create' | 'links', env: Record<string, string>): Load {
  return async (seconds) => {
    const r = await runWrk({ url: `${urls.api}/`, script, connections: CONNECTIONS, seconds, env });
    // wrk counts statuses from 400 up as errors: a 303 is a press that went to checkout.
    const ok = r.requests - r.non2xx - r.errors;
    return { ...r, ok, rps: (r.rps * ok) / Math.max(1, r.requests) };
  };
}

let n = 0;
const runId = randomBytes(4).toString('hex');
const paths = links.map((l) => l.path).join(',');
const loads: Record<string, () => Load> = {
  'POST /api/v1/payment-intents': () =>
    USE_WRK
      ? wrkLoad('create', { BENCH_KEYS: keys.join(','), BENCH_RUN: `${runId}-${n++}` })
      : autocannonLoad('2xx', {
          method: 'POST',
          path: '/api/v1/payment-intents',
          setupRequest: (req) => {
            const i = n++;
            return { ...req, headers: { authorization: `Bearer ${keys[i % keys.length]!}`, 'idempotency-key': `bench-${runId}-${i}`, 'content-type': 'application/json' }, body: '{"amount":"1.25","description":"bench"}' };
          },
        }),
  'POST /p/{handle}/{slug} (hold + intent + 303)': () =>
    USE_WRK
      ? wrkLoad('links', { BENCH_PATHS: paths, BENCH_METHOD: 'POST' })
      : autocannonLoad('3xx', { method: 'POST', setupRequest: (req) => ({ ...req, path: links[n++ % links.length]!.path, headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: '' }) }),
  'GET /p/{handle}/{slug}': () =>
    USE_WRK ? wrkLoad('links', { BENCH_PATHS: paths, BENCH_METHOD: 'GET' }) : autocannonLoad('2xx', { method: 'GET', setupRequest: (req) => ({ ...req, path: links[n++ % links.length]!.path }) }),
};

const pressedCount = async () => (await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM actors WHERE kind = 'payment_intent' AND snapshot->'context'->'metadata' ? 'hold'`)).rows[0]!.n;
const holdCount = async () => (await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM actors WHERE kind = 'link_hold' AND state = 'HELD'`)).rows[0]!.n;
/** Work a press leaves for after its 303 (the outbox relay, bus consumers): done when every press has its hold. */
async function settled(): Promise<void> {
  const pressed = await pressedCount();
  await waitFor(async () => (await holdCount()) >= pressed, 120_000, 'every hold created');
}

async function run(name: string, seconds: number): Promise<Row> {
  const load = loads[name]!();
  const s0 = await serverReading();
  const w0 = serverWrites();
  const nats0 = natsPid ? procCpu(natsPid) : 0;
  const { out: r, pg } = await pgCpu(
    (async () => {
      const figures = await load(seconds);
      await settled();
      return figures;
    })(),
  );
  const s1 = await serverReading();
  const writes = serverWrites() - w0;
  const nats = natsPid ? procCpu(natsPid) - nats0 : 0;
  const per = (x: number) => (x * 1000) / Math.max(1, r.requests);
  return {
    name,
    rps: r.rps,
    p50: r.p50,
    p99: r.p99,
    ok: r.ok,
    other: r.requests - r.ok + r.errors,
    cpuMs: per(s1.cpu - s0.cpu),
    pgMs: per(pg),
    natsMs: per(nats),
    // The two readings' own statements: none (the /cpu route reads no database).
    statements: (s1.statements - s0.statements) / Math.max(1, r.requests),
    writes: per(writes) / 1000,
  };
}

const rows: Row[] = [];
for (const name of Object.keys(loads)) {
  // Long enough for V8 to optimise the path before it is measured.
  await run(name, 4);
  rows.push(await run(name, SECONDS));
}

// The page as customers meet it, as bench:invoices measures the invoice page: BENCH_SESSIONS (50)
// clients in another process, each asking every 1/BENCH_PACE s (4) for the links in turn, so
// 200/s, latency counted from when a request was due (a saturated run's p99 is its queue).
const SESSIONS = Number(process.env.BENCH_SESSIONS ?? 50);
const PACE = Number(process.env.BENCH_PACE ?? 4);
const pacedFiles = { cookies: `/tmp/${schema}-cookies.txt`, paths: `/tmp/${schema}-paths.txt` };
// A public page: the generator's cookie goes under a name the service does not read.
process.env.PACED_COOKIE_NAME = 'bench_unread';
writeFileSync(pacedFiles.cookies, 'none\n');
writeFileSync(pacedFiles.paths, `${links.map((l) => l.path).join('\n')}\n`);
const pagePaced = await runPaced(`${urls.api}${links[0]!.path}`, pacedFiles.cookies, { sessions: SESSIONS, pace: PACE, seconds: SECONDS, pathsFile: pacedFiles.paths, warmupS: 2 });
for (const f of Object.values(pacedFiles)) rmSync(f, { force: true });

// Every 303 took a unit and has its hold; the links' counts are their holds.
const heldSum = async () => (await db.query<{ n: number }>(`SELECT coalesce(sum((snapshot->'context'->>'units_held')::int), 0)::int AS n FROM actors WHERE kind = 'payment_link'`)).rows[0]!.n;
const intents = await pressedCount();
await waitFor(async () => (await holdCount()) === intents, 120_000, 'every hold created');
const held = await heldSum();

const fmt = (x: number, d = 0) => x.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });
const create = rows[0]!.rps;
console.log(`\nbench:links  ${new Date().toISOString()}  ${os.cpus().length} cores (${os.cpus()[0]?.model ?? '?'}), node ${process.version}`);
console.log(databaseTransport(DATABASE_URL));
console.log(`${USE_WRK ? 'wrk (C) in its own process' : 'autocannon in this process'}; ${CONNECTIONS} connections, ${SECONDS} s per measurement (after 4 s of warm-up), ${MERCHANTS} live links round-robin, limits raised to ${LIMIT}/min\n`);
console.log('| what | ok/s | ratio to create | p50 ms | p99 ms | ok | other | server CPU ms/req | PostgreSQL CPU ms/req | nats-server CPU ms/req | SQL statements/req | server write syscalls/req |');
console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |');
for (const r of rows) console.log(`| ${r.name} | ${fmt(r.rps)} | ${fmt(r.rps / create, 3)} | ${fmt(r.p50, 1)} | ${fmt(r.p99, 1)} | ${r.ok} | ${r.other} | ${fmt(r.cpuMs, 3)} | ${fmt(r.pgMs, 3)} | ${fmt(r.natsMs, 3)} | ${fmt(r.statements, 2)} | ${fmt(r.writes, 2)} |`);
console.log(`\nGET /p/{handle}/{slug} paced ${SESSIONS * PACE}/s from another process: ${pagePaced.rps}/s served, p50 ${pagePaced.p50} ms, p99 ${pagePaced.p99} ms, not 2xx ${pagePaced.non2xx}`);
console.log(`\nholds: ${intents} intents from links, ${await holdCount()} holds HELD, links count ${held} units held${held === intents ? ' (equal)' : ' (MISMATCH)'}`);

child.kill('SIGTERM');
await new Promise((r) => child.once('exit', r));
await db.query(`DROP SCHEMA ${schema} CASCADE`).catch(() => undefined);
await db.close();
if (held !== intents) process.exit(1);
