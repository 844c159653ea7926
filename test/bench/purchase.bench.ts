/**
 * `npm run bench:purchase`: what one USDC purchase (`POST /api/v1/purchase`: idempotency
 * claim, two EIP-712 signature recoveries, the ledger read, the `VERIFIED` commit) costs the
 * service, in figures the machine's load does not move: CPU of the service's process per
 * purchase (the load generator runs in a child process, so it does not count), CPU of its
 * PostgreSQL backends per purchase, statements per purchase (counted at the database port) and
 * WAL bytes per purchase (whole server, and of the bench's own tables where pg_walinspect can be
 * had). Wall-clock rate and latencies are printed too, for a quiet machine.
 * Env: BENCH_OPS (purchases measured, default 2,000), BENCH_WARMUP (purchases before, 3,000), BENCH_CONCURRENCY (32), BENCH_LEGS=base64:
 * the legs sent as the base64 header values the x402 SDK makes (JSON objects by default),
 * BENCH_PROFILE=<file>: a V8 CPU profile of the measured run; BENCH_SIZES=1: the stored sizes of
 * one purchase's snapshot, journal event and idempotency record; BENCH_PLANS=1: generic and
 * custom plans of the prepared statements (a statement planned on every call shows here).
 */
import { databaseTransport, nameBackends } from './bench-env.ts';
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { buildMarketApp } from '../../gateway/market/app.ts';
import { ActorHost } from '../../runtime/engine/actor-host.ts';
import { machineRegistry } from '../../runtime/machines.ts';
import { openMarket } from '../../runtime/market/index.ts';
import { resourceIdOf } from '../../runtime/market/listing-signature.ts';
import { signLeg, toBase64 } from '../fixtures/market.ts';
import { countingDb } from '../helpers/counting-db.ts';
import { backendsCpu } from './proc-cpu.ts';
import { walCounters } from './pg-wal.ts';
import { currentLsn, walByRelation } from './pg-wal-relations.ts';
import { fmt } from './stats.ts';
import { runRequests } from './request-load.ts';

const { app: APP, databaseUrl } = nameBackends(`anm-purchase-bench-${process.pid}`);
const { openReal, postgresReachable } = await import('../helpers/backends.ts');

const OPS = Number(process.env.BENCH_OPS ?? 2_000);
// V8 keeps compiling the route's code for a few thousand requests (a sixth of the CPU after 500):
// the figure is meant for a service that has been up a while.
const WARMUP = Number(process.env.BENCH_WARMUP ?? 3_000);
const CONC = Number(process.env.BENCH_CONCURRENCY ?? 32);
const PROFILE = process.env.BENCH_PROFILE;
// Legs as the base64 header values the x402 SDK makes, instead of JSON objects.
const BASE64_LEGS = process.env.BENCH_LEGS === 'base64';
const WORDS = ['weather', 'translate', 'geocode', 'sentiment', 'images', 'stocks', 'news', 'ocr', 'speech', 'search'];

if (!(await postgresReachable())) throw new Error('bench:purchase needs PostgreSQL (DATABASE_URL)');
const backend = await openReal({ poolSize: 16 });
// Statements at the database port: every query, and every query inside a transaction; the
// bench's own reads (backend pids, WAL counters) go around the count.
const uncounted = backend.db;
const db = countingDb(backend.db);
const host = new ActorHost({ db, bus: backend.bus, registry: machineRegistry() });
const market = openMarket(db, host, { feeAddresses: { USDC: '0x000000000000000000000000000000000000fee5', ANM: 'anm1unused' } });
const seller = privateKeyToAccount(generatePrivateKey());
for (const [i, word] of WORDS.entries()) {
  const endpoint = `https://seller${i}.example/api`;
  await host.apply({ kind: 'listing', id: resourceIdOf('GET', endpoint) }, {
    type: 'listing.register', id: `r${i}`, at: Date.now(), resource_id: resourceIdOf('GET', endpoint), provider_id: 'prov_b0b0',
    name: `${word} service`, description: `A ${word} API`, category: word, tags: [word], endpoint, method: 'GET', model: 'per_call',
    assets: [{ asset: 'USDC', pay_to: seller.address, seller_price_atomic: String(10_000 + i) }],
    documentation_url: null, request_schema: null, response_schema: null, example_request: null, example_response: null,
  });
}
// The watch over VERIFIED purchases would read every purchase of the run: not in the measurement.
await market.start(3_600_000);
const app = await buildMarketApp({ ...market, perIpPerMinute: 1e9 });
const origin = await app.listen({ port: 0, host: '127.0.0.1' });

const buyers = Array.from({ length: 16 }, () => privateKeyToAccount(generatePrivateKey()));
for (const b of buyers) await market.ledger.fund(b.address, 10n ** 15n);
async function prepare(n: number, tag: string) {
  const requests: Array<{ key: string; body: string }> = [];
  for (let i = 0; i < n; i++) {
    const q = await market.purchases.quote({ capability: WORDS[i % WORDS.length]!, asset: 'USDC' });
    const b = buyers[i % buyers.length]!;
    const legs = q.payment_requirements.accepts[0]!.extra.legs;
    const seller = await signLeg(b, { to: legs.seller.payTo, value: legs.seller.amount });
    const fee = await signLeg(b, { to: legs.fee.payTo, value: legs.fee.amount });
    const payment = { legs: BASE64_LEGS ? { seller: toBase64(seller), fee: toBase64(fee) } : { seller, fee } };
    requests.push({ key: `${tag}${i}`, body: JSON.stringify({ intent_id: q.intent_id, payment }) });
  }
  return requests;
}

/** The purchases from another process, each sent once (`exact`: no replay past the count). */
const load = (requests: Array<{ key: string; body: string }>) =>
  runRequests({ url: origin, requests: requests.map((r) => ({ method: 'POST', path: '/api/v1/purchase', body: r.body, headers: { 'idempotency-key': r.key } })), count: requests.length, connections: CONC, exact: true });

process.stdout.write(`backend ${databaseTransport(databaseUrl)}; preparing ${WARMUP} + ${OPS} purchases…\n`);
const warm = await prepare(WARMUP, 'w');
const measured = await prepare(OPS, 'm');
await load(warm);

const backendPids = async () => (await uncounted.query<{ pid: number }>(`SELECT pid FROM pg_stat_activity WHERE application_name = $1`, [APP])).rows.map((r) => r.pid);
const session = PROFILE ? new Session() : undefined;
if (session) {
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
}
const wal0 = await walCounters(uncounted);
const lsn0 = await currentLsn(uncounted);
const s0 = db.queries;
process.stdout.write(`measuring ${OPS} purchases…\n`);
const cpu0 = process.cpuUsage();
const { out: r, cpu: pgS } = await backendsCpu(backendPids, load(measured));
const cpu = process.cpuUsage(cpu0);
const stmts = db.queries - s0;
const wal1 = await walCounters(uncounted);
const lsn1 = await currentLsn(uncounted);
if (session) {
  const { profile } = await session.post('Profiler.stop');
  writeFileSync(PROFILE!, JSON.stringify(profile));
  session.disconnect();
}
process.stdout.write(
  [
    `purchases: ${r.requests} (${r.non2xx} not 2xx, ${r.errors} errors), ${fmt(r.rps)}/s wall, p50 ${fmt(r.p50, 1)} ms, p99 ${fmt(r.p99, 1)} ms, ${CONC} in flight`,
    `node CPU per purchase: ${fmt(((cpu.user + cpu.system) / 1000) / r.requests, 3)} ms (user ${fmt(cpu.user / 1000 / r.requests, 3)}, system ${fmt(cpu.system / 1000 / r.requests, 3)})`,
    `PostgreSQL backends' CPU per purchase: ${fmt((pgS * 1000) / r.requests, 3)} ms`,
    `statements per purchase: ${fmt(stmts / r.requests, 2)}`,
    `WAL per purchase, whole server: ${fmt((wal1.bytes - wal0.bytes) / r.requests)} bytes, ${fmt((wal1.records - wal0.records) / r.requests, 1)} records, ${fmt(((wal1.fpi - wal0.fpi) / r.requests) * 1000)} full-page images per 1,000, ${wal1.checkpoints - wal0.checkpoints} checkpoints`,
    '',
  ].join('\n'),
);
const shares = await walByRelation(uncounted, backend.schema!, lsn0, lsn1);
if (shares) {
  const total = shares.reduce((a, w) => a + w.bytes, 0);
  process.stdout.write(`WAL per purchase, this bench's tables (pg_walinspect): ${fmt(total / r.requests)} bytes, ${fmt(shares.reduce((a, w) => a + w.records, 0) / r.requests, 1)} records\n`);
  for (const w of shares.filter((x) => x.bytes / r.requests >= 20)) process.stdout.write(`  ${w.relation} ${w.recordType}: ${fmt(w.records / r.requests, 2)} records, ${fmt(w.bytes / r.requests)} bytes\n`);
}
if (process.env.BENCH_SIZES) {
  const { rows } = await uncounted.query<Record<string, unknown>>(`SELECT length(i.body) AS body, pg_column_size(i.body) AS body_stored, convert_from(i.body, 'UTF8') AS text, pg_column_size(a.snapshot) AS snap_stored, length(a.snapshot::text) AS snap_text, a.snapshot::text AS snap,
      (SELECT length(e.event::text) FROM actor_events e WHERE e.actor_id = a.id AND e.seq = 2) AS event_text, (SELECT pg_column_size(e.event) FROM actor_events e WHERE e.actor_id = a.id AND e.seq = 2) AS event_stored
    FROM idempotency_keys i JOIN actors a ON a.id = i.merchant WHERE i.key = 'm1'`);
  process.stdout.write(`${JSON.stringify(rows[0], null, 1)}\n`);
}
if (process.env.BENCH_PLANS) {
  const seen = new Map<string, { generic: number; custom: number }>();
  for (let i = 0; i < 40; i++) {
    const { rows } = await backend.db.tx((q) => q.query<{ statement: string; generic_plans: string; custom_plans: string }>(`SELECT statement, generic_plans, custom_plans FROM pg_prepared_statements`));
    for (const row of rows) {
      const k = row.statement.replace(/\s+/g, ' ').slice(0, 110);
      const v = seen.get(k) ?? { generic: 0, custom: 0 };
      seen.set(k, { generic: Math.max(v.generic, Number(row.generic_plans)), custom: Math.max(v.custom, Number(row.custom_plans)) });
    }
  }
  for (const [k, v] of seen) process.stdout.write(`plans generic ${v.generic} custom ${v.custom}: ${k}\n`);
}
market.stop();
await app.close();
await backend.close();
