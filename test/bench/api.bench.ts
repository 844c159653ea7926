/**
 * `npm run bench:api`: the merchant API over HTTP on real PostgreSQL (the server in a child
 * process, the load generator on the same machine: wrk when /usr/bin/wrk is installed, else
 * autocannon in this process; see test/bench/wrk.ts). Measures, in one run:
 *   bare     GET of a bare Fastify route in the server process (the ceiling);
 *   create   POST /api/v1/payment-intents, a fresh Idempotency-Key on every request;
 *   get      GET /api/v1/payment-intents/{id} over the intents just created;
 * and reports each as a ratio to the bare route, with p50/p99 and CPU per request of the server
 * process, of its PostgreSQL backends (found by application_name) and of nats-server, read
 * from /proc: on a machine shared with other work the rates swing with its load, the CPU per
 * request much less, and it gives the rate two dedicated cores would sustain for the service.
 * For scale it also times `ActorHost.apply(intent.create)` alone (no HTTP, no gate) at the
 * same concurrency: the engine's share of a create.
 * Load is spread over BENCH_MERCHANTS merchants' test keys AND the limits are raised through
 * configuration (RATE_LIMIT_*): every request still passes both token buckets, but no bucket
 * refuses, so the figures are the cost of the full path, not of 429s. Tokens come from the
 * server process's leases (ADR 0004): with limits this high a lease quickly grows to 10% of
 * the capacity, so after the first requests of each key no request writes a bucket row (a key
 * or IP near its limit costs one lease round trip per chunk instead).
 * Env: BENCH_SECONDS (10), BENCH_CONNECTIONS (48), BENCH_MERCHANTS (32), BENCH_POOL (the service's DATABASE_POOL_SIZE, 8),
 * BENCH_LOADGEN (wrk | autocannon).
 */
import { databaseTransport } from './bench-env.ts';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import autocannon from 'autocannon';
import { MemoryBus } from '../../runtime/bus/memory-bus.ts';
import { ActorHost } from '../../runtime/engine/actor-host.ts';
import { machineRegistry } from '../../runtime/machines.ts';
import { Merchants } from '../../runtime/merchant/merchants.ts';
import { openDb } from '../../storage/open.ts';
import { DATABASE_URL, postgresReachable, uniqueName } from '../helpers/backends.ts';
import { natsServerPid, procCpu } from './proc-cpu.ts';
import { runWrk, wrkInstalled, type LoadFigures } from './wrk.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
// 48 connections: the most load at which POST's p99 stayed under its 50 ms in the runs of
// 2026-11-25 (docs/benchmarks.md); CPU per create falls as concurrency rises (larger claim
// batches and relay batches, feed emits that leave together).
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 48);
const MERCHANTS = Number(process.env.BENCH_MERCHANTS ?? 32);
const LIMIT = '100000000';
const USE_WRK = (process.env.BENCH_LOADGEN ?? (wrkInstalled() ? 'wrk' : 'autocannon')) === 'wrk';

if (!(await postgresReachable())) {
  console.error(`bench:api needs PostgreSQL (${DATABASE_URL})`);
  process.exit(1);
}

const schema = uniqueName('bench_api');
const APP = uniqueName('anmpay_bench_api');
const pepper = randomBytes(32).toString('hex');
const db = await openDb({ databaseUrl: DATABASE_URL, schema });
const merchants = new Merchants(db, Buffer.from(pepper, 'utf8'));
const keys: string[] = [];
for (let i = 0; i < MERCHANTS; i += 8) {
  const batch = await Promise.all(Array.from({ length: Math.min(8, MERCHANTS - i) }, (_, j) => merchants.create({ name: `Bench ${i + j}` })));
  keys.push(...batch.map((m) => m.keys.test.secret));
}

// The server runs with the V8 flags `npm start` gives the service (package.json): a 32 MiB
// young generation, which halved the scavenges' share of a create's CPU.
const child = spawn(process.execPath, ['--max-semi-space-size=32', '--import', 'tsx', 'test/bench/api-server.ts'], {
  env: {
    ...process.env,
    BENCH_SCHEMA: schema,
    BENCH_NAMESPACE: uniqueName('bench'),
    ANMPAY_KEY_PEPPER: pepper,
    PGAPPNAME: APP,
    ANMPAY_OPERATOR_TOKEN: `opt_${randomBytes(16).toString('hex')}`,
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

async function serverCpu(): Promise<number> {
  const u = (await (await fetch(`${urls.bare}/cpu`)).json()) as { user: number; system: number };
  return (u.user + u.system) / 1e6;
}

const natsPid = natsServerPid();

/** CPU seconds of the server's PostgreSQL backends and of nats-server, sampled while a run lasts (pool connections come and go). */
async function sideCpu<T>(work: Promise<T>): Promise<{ out: T; pg: number; nats: number }> {
  const first = new Map<number, number>();
  const last = new Map<number, number>();
  const natsStart = natsPid ? procCpu(natsPid) : 0;
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
  const pg = [...last].reduce((a, [pid, v]) => a + v - (first.get(pid) ?? v), 0);
  return { out, pg, nats: natsPid ? procCpu(natsPid) - natsStart : 0 };
}

interface Figures {
  name: string;
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
  cpuMsPerReq: number;
  pgMsPerReq: number;
  natsMsPerReq: number;
}

/** One measurement: the load generator's figures plus the service's CPU over the same run. */
async function run(name: string, load: Load, seconds = SECONDS): Promise<Figures> {
  const cpu0 = await serverCpu();
  const { out: r, pg, nats } = await sideCpu(load(seconds));
  const cpu = (await serverCpu()) - cpu0;
  const per = (x: number) => (x * 1000) / Math.max(1, r.requests);
  return { name, rps: r.rps, p50: r.p50, p99: r.p99, non2xx: r.non2xx, errors: r.errors, cpuMsPerReq: per(cpu), pgMsPerReq: per(pg), natsMsPerReq: per(nats) };
}

type Load = (seconds: number) => Promise<LoadFigures>;

function autocannonLoad(opts: autocannon.Options): Load {
  return async (seconds) => {
    const r = await autocannon({ connections: CONNECTIONS, duration: seconds, ...opts });
    return { requests: r.requests.total, rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, non2xx: r.non2xx, errors: r.errors + r.timeouts };
  };
}

function wrkLoad(url: string, script: 'create' | 'read' | 'bare', env: Record<string, string> = {}): Load {
  return (seconds) => runWrk({ url, script, connections: CONNECTIONS, seconds, env });
}

const runId = randomBytes(4).toString('hex');
let n = 0;
const createLoad = (): Load =>
  USE_WRK
    ? wrkLoad(`${urls.api}/`, 'create', { BENCH_KEYS: keys.join(','), BENCH_RUN: `${runId}-${n++}` })
    : autocannonLoad({
        url: urls.api,
        requests: [
          {
            method: 'POST',
            path: '/api/v1/payment-intents',
            setupRequest: (req) => {
              const i = n++;
              return {
                ...req,
                headers: { authorization: `Bearer ${keys[i % keys.length]}`, 'idempotency-key': `bench-${runId}-${i}`, 'content-type': 'application/json' },
                body: `{"amount":"1.25","description":"bench","metadata":{"i":${i}}}`,
              };
            },
          },
        ],
      });
const bareLoad = USE_WRK ? wrkLoad(`${urls.bare}/bare`, 'bare') : autocannonLoad({ url: `${urls.bare}/bare` });

const results: Figures[] = [];
await run('warm-up', bareLoad, 2);
results.push(await run('bare Fastify GET', bareLoad));
// Long enough for V8 to finish optimising the create path: the first seconds of a fresh
// server ran ~10 % slower.
await run('warm-up', createLoad(), 5);
results.push(await run('POST /api/v1/payment-intents', createLoad()));

// Ids to read back, each with the key of its merchant.
const reads: Array<{ key: string; id: string }> = [];
for (const key of keys) {
  const list = (await (await fetch(`${urls.api}/api/v1/payment-intents?limit=100`, { headers: { authorization: `Bearer ${key}` } })).json()) as { data: Array<{ id: string }> };
  for (const x of list.data) reads.push({ key, id: x.id });
}
const readsFile = path.join(os.tmpdir(), `bench-api-reads-${runId}.txt`);
await writeFile(readsFile, reads.map((r) => `${r.key} ${r.id}`).join('\n'));
let g = 0;
const getLoad: Load = USE_WRK
  ? wrkLoad(`${urls.api}/`, 'read', { BENCH_READS: readsFile })
  : autocannonLoad({
      url: urls.api,
      requests: [
        {
          method: 'GET',
          setupRequest: (req) => {
            const r = reads[g++ % reads.length]!;
            return { ...req, path: `/api/v1/payment-intents/${r.id}`, headers: { authorization: `Bearer ${r.key}` } };
          },
        },
      ],
    });
await run('warm-up', getLoad, 2);
results.push(await run('GET /api/v1/payment-intents/{id}', getLoad));
await rm(readsFile, { force: true });

/** The engine alone: what one create costs below the gateway. */
async function engineOnly(): Promise<Figures> {
  const host = new ActorHost({ db, bus: new MemoryBus(), registry: machineRegistry() });
  const lat: number[] = [];
  const at = Date.now();
  const end = performance.now() + SECONDS * 1000;
  let i = 0;
  const cpu0 = process.cpuUsage();
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (performance.now() < end) {
        const id = `pay_engine${runId}${i++}`;
        const t = performance.now();
        await host.apply({ kind: 'payment_intent', id, merchant: 'mer_engine', mode: 'test' }, {
          type: 'intent.create', id: `${id}:create`, at, intent_id: id, merchant_id: 'mer_engine', mode: 'test', currency: 'ANM',
          requested_amount: '1.25', anm_amount: '1250000000', description: 'bench', metadata: { i }, payment_address: 'tanm1bench',
          treasury_address: 'tanm1treasury', payment_reference: `pr1:${id}`, expires_at: at + 1_800_000,
        });
        lat.push(performance.now() - t);
      }
    }),
  );
  const cpu = process.cpuUsage(cpu0);
  lat.sort((a, b) => a - b);
  return {
    name: 'ActorHost.apply(intent.create) alone, no HTTP',
    rps: lat.length / SECONDS,
    p50: lat[Math.floor(lat.length * 0.5)] ?? 0,
    p99: lat[Math.floor(lat.length * 0.99)] ?? 0,
    non2xx: 0,
    errors: 0,
    cpuMsPerReq: (cpu.user + cpu.system) / 1000 / Math.max(1, lat.length),
    pgMsPerReq: NaN,
    natsMsPerReq: NaN,
  };
}
results.push(await engineOnly());

const bare = results[0]!.rps;
const fmt = (x: number, d = 0) => x.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });
console.log(`\nbench:api  ${new Date().toISOString()}  ${os.cpus().length} cores (${os.cpus()[0]?.model ?? '?'}), node ${process.version}`);
console.log(databaseTransport(DATABASE_URL));
console.log(`load generator: ${USE_WRK ? 'wrk (one thread)' : 'autocannon (in this process)'}; ${CONNECTIONS} connections, ${SECONDS} s per measurement, ${MERCHANTS} merchants' test keys round-robin, limits raised to ${LIMIT}/min via RATE_LIMIT_*`);
console.log(`${reads.length} intents read back in the GET run\n`);
console.log('Server CPU: the gateway process (Node); PostgreSQL: its backends; service total = both + nats-server, and the rate two dedicated cores would sustain at that cost (load generator excluded).\n');
console.log('| what | req/s | ratio to bare | p50 ms | p99 ms | server CPU ms/req | PostgreSQL CPU ms/req | service CPU ms/req | 2 cores would sustain | non-2xx | errors |');
console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |');
for (const r of results) {
  const service = r.cpuMsPerReq + r.pgMsPerReq + r.natsMsPerReq;
  const side = (x: number) => (Number.isNaN(x) ? '–' : fmt(x, 3));
  console.log(
    `| ${r.name} | ${fmt(r.rps)} | ${fmt(r.rps / bare, 3)} | ${fmt(r.p50, 1)} | ${fmt(r.p99, 1)} | ${fmt(r.cpuMsPerReq, 3)} | ${side(r.pgMsPerReq)} | ${side(service)} | ${Number.isNaN(service) ? '–' : fmt(2000 / service)}/s | ${r.non2xx} | ${r.errors} |`,
  );
}

child.kill('SIGTERM');
await new Promise((r) => child.once('exit', r));
await db.query(`DROP SCHEMA ${schema} CASCADE`).catch(() => undefined);
await db.close();
