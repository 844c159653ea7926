/**
 * `npm run bench:create-path`: the merchant API's create (or read) path alone, for figures the
 * machine's load does not move, where bench:api's rates and CPU per request do. `buildApp` with
 * the gate, idempotency and an `ActorHost` on PostgreSQL, and nothing driven by the clock but
 * the gate's lease upkeep (no outbox relay, timer sweeper or bus consumer); requests one at a
 * time over keep-alive HTTP, so no batching depends on timing. After `BENCH_WARMUP` requests it
 * measures `BENCH_REQUESTS` and prints SQL statements per request (by statement), scavenges per
 * request (with a fixed young generation, a measure of bytes allocated) and CPU per request
 * (this process: server and client). Under callgrind it switches instrumentation on for the
 * measured requests only, so the instruction count is the path's:
 *
 *   valgrind --tool=callgrind --separate-threads=yes --instr-atstart=no \
 *     node --min-semi-space-size=8 --max-semi-space-size=8 --import tsx test/bench/create-path.bench.ts
 *
 * `BENCH_ROOT=/path/to/other/checkout` runs the same driver against another checkout's code
 * (its gateway, runtime and storage), to compare two versions on the same measures.
 * Env: BENCH_WHAT (create | read), BENCH_REQUESTS (2,000), BENCH_WARMUP (1,500), DATABASE_URL.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import path from 'node:path';
import { constants, PerformanceObserver } from 'node:perf_hooks';
import type { Db, Queryable } from '../../storage/db.ts';
import { DATABASE_URL } from '../helpers/backends.ts';

const ROOT = path.resolve(process.env.BENCH_ROOT ?? path.join(import.meta.dirname, '../..'));
const WHAT = process.env.BENCH_WHAT === 'read' ? 'read' : 'create';
const N = Number(process.env.BENCH_REQUESTS ?? 2000);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 1500);
const from = async <T>(file: string): Promise<T> => (await import(path.join(ROOT, file))) as T;
const { buildApp } = await from<typeof import('../../gateway/app.ts')>('gateway/app.ts');
const { ActorHost } = await from<typeof import('../../runtime/engine/actor-host.ts')>('runtime/engine/actor-host.ts');
const { MemoryBus } = await from<typeof import('../../runtime/bus/memory-bus.ts')>('runtime/bus/memory-bus.ts');
const { machineRegistry } = await from<typeof import('../../runtime/machines.ts')>('runtime/machines.ts');
const { openMerchantServices } = await from<typeof import('../../runtime/merchant/index.ts')>('runtime/merchant/index.ts');
const { openDb } = await from<typeof import('../../storage/open.ts')>('storage/open.ts');

/** Every statement sent through `db`, a transaction as BEGIN, its statements and COMMIT. */
const statements = new Map<string, number>();
let counting = false;
function counted(db: Db): Db {
  const note = (sql: string) => {
    if (!counting) return;
    const k = sql.replace(/\s+/g, ' ').trim().slice(0, 70);
    statements.set(k, (statements.get(k) ?? 0) + 1);
  };
  const wrap = (q: Queryable): Queryable => ({
    query: (sql, params) => (note(sql), q.query(sql, params)),
    exec: (sql) => (note(sql), q.exec(sql)),
  });
  return { ...wrap(db), kind: db.kind, tx: (fn) => (note('BEGIN'), db.tx((q) => fn(wrap(q))).finally(() => note('COMMIT'))), close: () => db.close() };
}

const schema = `bench_path_${randomBytes(4).toString('hex')}`;
const raw = await openDb({ databaseUrl: DATABASE_URL, schema, poolSize: 8 });
const db = counted(raw);
const HIGH = 1e8;
const config = { ANMPAY_DATA_DIR: '.data', ANMPAY_KEY_PEPPER: randomBytes(24).toString('hex'), ANMPAY_OPERATOR_TOKEN: `opt_${randomBytes(16).toString('hex')}`, RATE_SOURCE_URL: undefined };
const services = await openMerchantServices(db, { ...config, RATE_LIMIT_KEY_PER_MIN: HIGH, RATE_LIMIT_KEY_BURST: HIGH, RATE_LIMIT_IP_PER_MIN: HIGH, RATE_LIMIT_IP_BURST: HIGH }, { demo: false });
const host = new ActorHost({ db, bus: new MemoryBus(), registry: machineRegistry() });
const app = await buildApp({ ...services, host, baseUrl: () => 'http://127.0.0.1', dbHealthy: async () => true, lifecycle: { draining: false } });
const url = new URL(await app.listen({ host: '127.0.0.1', port: 0 }));
const key = (await services.merchants.create({ name: 'Create path' })).keys.test.secret;
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

function send(method: string, p: string, body?: string, idem?: string): Promise<string> {
  const headers: Record<string, string | number> = { authorization: `Bearer ${key}` };
  if (body !== undefined) Object.assign(headers, { 'idempotency-key': idem, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  return new Promise((resolve, reject) => {
    const r = http.request({ host: url.hostname, port: url.port, path: p, method, agent, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => ((res.statusCode ?? 0) < 300 ? resolve(Buffer.concat(chunks).toString()) : reject(new Error(`${res.statusCode}: ${Buffer.concat(chunks).toString()}`))));
    });
    r.on('error', reject);
    r.end(body);
  });
}

let n = 0;
const ids: string[] = [];
async function create(): Promise<void> {
  const i = n++;
  const text = await send('POST', '/api/v1/payment-intents', `{"amount":"1.25","description":"bench","metadata":{"i":${i}}}`, `path-${i}`);
  if (ids.length < 1000) ids.push((JSON.parse(text) as { id: string }).id);
}
let g = 0;
const read = () => send('GET', `/api/v1/payment-intents/${ids[g++ % ids.length]}`);
const work = WHAT === 'create' ? create : read;

for (let i = 0; i < WARMUP; i++) await create();
if (WHAT === 'read') for (let i = 0; i < WARMUP; i++) await read();

const underCallgrind = (process.env.LD_PRELOAD ?? '').includes('vgpreload');
const callgrind = (on: boolean) => underCallgrind && execFileSync('callgrind_control', ['-i', on ? 'on' : 'off', String(process.pid)]);
let scavenges = 0;
const gc = new PerformanceObserver((list) => {
  for (const e of list.getEntries()) if ((e as { detail?: { kind?: number } }).detail?.kind === constants.NODE_PERFORMANCE_GC_MINOR) scavenges++;
});
gc.observe({ entryTypes: ['gc'] });
callgrind(true);
counting = true;
const cpu0 = process.cpuUsage();
for (let i = 0; i < N; i++) await work();
const cpu = process.cpuUsage(cpu0);
counting = false;
callgrind(false);
await new Promise((r) => setTimeout(r, 50));
gc.disconnect();

const total = [...statements.values()].reduce((a, b) => a + b, 0);
console.log(`bench:create-path  ${new Date().toISOString()}  code: ${ROOT}  ${WHAT} x ${N} one at a time (after ${WARMUP})`);
console.log(`SQL statements per ${WHAT}: ${(total / N).toFixed(3)}`);
for (const [k, v] of [...statements].sort((a, b) => b[1] - a[1])) console.log(`  ${(v / N).toFixed(3)}  ${k}`);
console.log(`scavenges per 1,000: ${((scavenges * 1000) / N).toFixed(1)} (young generation: run with --min-semi-space-size=8 --max-semi-space-size=8 to compare)`);
console.log(`CPU per ${WHAT}, this process (server and client): ${((cpu.user + cpu.system) / 1000 / N).toFixed(3)} ms`);

agent.destroy();
await app.close();
await raw.query(`DROP SCHEMA ${schema} CASCADE`);
await raw.close();
process.exit(0);
