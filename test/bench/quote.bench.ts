/**
 * `npm run bench:quote`: what one quote (`POST /api/v1/route/quote`: the listing's choice, a
 * new purchase actor in QUOTED with its expiry timer, the x402 requirements) costs the service,
 * in figures the machine's load does not move: CPU of the service's process per quote (the load
 * comes from another process), CPU of its PostgreSQL backends per quote, statements per quote
 * and WAL per quote (of the bench's own tables, read with pg_walinspect), in BENCH_ROUNDS rounds of BENCH_OPS quotes each, with their medians.
 * Env: BENCH_OPS (quotes per round, default 3,000), BENCH_ROUNDS (5), BENCH_CONCURRENCY (32),
 * BENCH_ASSET (USDC or ANM), BENCH_PROFILE=<file>: a V8 CPU profile of the last round;
 * BENCH_SIZES=1: the stored sizes of one quote's snapshot and journal event.
 */
import { databaseTransport, nameBackends } from './bench-env.ts';
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { buildMarketApp } from '../../gateway/market/app.ts';
import { ActorHost } from '../../runtime/engine/actor-host.ts';
import { machineRegistry } from '../../runtime/machines.ts';
import { openMarket } from '../../runtime/market/index.ts';
import { resourceIdOf } from '../../runtime/market/listing-signature.ts';
import { countingDb } from '../helpers/counting-db.ts';
import { backendsCpu } from './proc-cpu.ts';
import { currentLsn, walByRelation } from './pg-wal-relations.ts';
import { fmt } from './stats.ts';
import { runRequests } from './request-load.ts';

const { app: APP, databaseUrl } = nameBackends(`anm-quote-bench-${process.pid}`);
const { openReal, postgresReachable } = await import('../helpers/backends.ts');

const [OPS, ROUNDS] = [Number(process.env.BENCH_OPS ?? 3_000), Number(process.env.BENCH_ROUNDS ?? 5)];
const CONC = Number(process.env.BENCH_CONCURRENCY ?? 32);
const ASSET = process.env.BENCH_ASSET === 'ANM' ? 'ANM' : 'USDC';
const PROFILE = process.env.BENCH_PROFILE;
const WORDS = ['weather', 'translate', 'geocode', 'sentiment', 'images', 'stocks', 'news', 'ocr', 'speech', 'search'];

if (!(await postgresReachable())) throw new Error('bench:quote needs PostgreSQL (DATABASE_URL)');
const backend = await openReal({ poolSize: 16 });
const uncounted = backend.db;
const db = countingDb(backend.db, { withTxFrame: true });
const host = new ActorHost({ db, bus: backend.bus, registry: machineRegistry() });
const market = openMarket(db, host, { feeAddresses: { USDC: '0x000000000000000000000000000000000000fee5', ANM: 'anm1unused' } });
for (const [i, word] of WORDS.entries()) {
  const endpoint = `https://seller${i}.example/api`;
  await host.apply({ kind: 'listing', id: resourceIdOf('GET', endpoint) }, {
    type: 'listing.register', id: `r${i}`, at: Date.now(), resource_id: resourceIdOf('GET', endpoint), provider_id: 'prov_b0b0',
    name: `${word} service`, description: `A ${word} API`, category: word, tags: [word], endpoint, method: 'GET', model: 'per_call',
    assets: [
      { asset: 'USDC', pay_to: '0x00000000000000000000000000000000000000a1', seller_price_atomic: String(10_000 + i) },
      { asset: 'ANM', pay_to: 'anm1seller', seller_price_atomic: String(10_000_000 + i) },
    ],
    documentation_url: null, request_schema: null, response_schema: null, example_request: null, example_response: null,
  });
}
// The watch over open purchases is not part of a quote.
await market.start(3_600_000);
const app = await buildMarketApp({ ...market, perIpPerMinute: 1e9 });
const origin = await app.listen({ port: 0, host: '127.0.0.1' });
const requests = WORDS.map((w) => ({ method: 'POST' as const, path: '/api/v1/route/quote', body: JSON.stringify({ capability: w, asset: ASSET }) }));
const load = () => runRequests({ url: origin, requests, count: OPS, connections: CONC, exact: true });
const backendPids = async () => (await uncounted.query<{ pid: number }>(`SELECT pid FROM pg_stat_activity WHERE application_name = $1`, [APP])).rows.map((r) => r.pid);

process.stdout.write(`backend ${databaseTransport(databaseUrl)}; ${ROUNDS} rounds of ${OPS} ${ASSET} quotes, ${CONC} in flight\n`);
await load();
const rows: Array<{ node: number; sys: number; pg: number; stmts: number; wal: number; walRecords: number; rps: number; p99: number }> = [];
for (let round = 0; round < ROUNDS; round++) {
  const session = PROFILE && round === ROUNDS - 1 ? new Session() : undefined;
  if (session) {
    session.connect();
    await session.post('Profiler.enable');
    await session.post('Profiler.start');
  }
  const lsn0 = await currentLsn(uncounted);
  const s0 = db.queries;
  const cpu0 = process.cpuUsage();
  const { out: r, cpu: pgS } = await backendsCpu(backendPids, load());
  const cpu = process.cpuUsage(cpu0);
  const stmts = db.queries - s0;
  const lsn1 = await currentLsn(uncounted);
  const shares = (await walByRelation(uncounted, backend.schema!, lsn0, lsn1)) ?? [];
  if (session) {
    const { profile } = await session.post('Profiler.stop');
    writeFileSync(PROFILE!, JSON.stringify(profile));
    session.disconnect();
  }
  // A failed request (a timeout on a loaded machine) makes the round's figures not per quote.
  if (r.non2xx > 0 || r.errors > 0) {
    process.stdout.write(`round ${round + 1}: ${r.non2xx} not 2xx, ${r.errors} errors: left out\n`);
    continue;
  }
  const n = r.requests;
  const row = { node: (cpu.user + cpu.system) / 1000 / n, sys: cpu.system / 1000 / n, pg: (pgS * 1000) / n, stmts: stmts / n, wal: shares.reduce((a, w) => a + w.bytes, 0) / n, walRecords: shares.reduce((a, w) => a + w.records, 0) / n, rps: r.rps, p99: r.p99 };
  rows.push(row);
  process.stdout.write(`round ${round + 1}: node ${fmt(row.node, 3)} ms (system ${fmt(row.sys, 3)}), PostgreSQL ${fmt(row.pg, 3)} ms, ${fmt(row.stmts, 2)} statements, WAL of its tables ${fmt(row.wal)} bytes / ${fmt(row.walRecords, 1)} records per quote; ${fmt(row.rps)}/s wall, p99 ${fmt(row.p99, 1)} ms\n`);
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
process.stdout.write(
  `QUOTE_MEDIANS ${JSON.stringify({ node: median(rows.map((r) => r.node)), pg: median(rows.map((r) => r.pg)), stmts: median(rows.map((r) => r.stmts)), wal: median(rows.map((r) => r.wal)), walRecords: median(rows.map((r) => r.walRecords)), rps: median(rows.map((r) => r.rps)) })}\n`,
);
if (process.env.BENCH_SIZES) {
  const { rows: s } = await uncounted.query<Record<string, unknown>>(`SELECT pg_column_size(a.snapshot) AS snap_stored, length(a.snapshot::text) AS snap_text, a.snapshot::text AS snap,
      (SELECT pg_column_size(e.event) FROM actor_events e WHERE e.actor_id = a.id AND e.seq = 1) AS event_stored,
      (SELECT e.event::text FROM actor_events e WHERE e.actor_id = a.id AND e.seq = 1) AS event
    FROM actors a WHERE a.kind = 'purchase' ORDER BY a.created_at DESC LIMIT 1`);
  process.stdout.write(`${JSON.stringify(s[0], null, 1)}\n`);
}
market.stop();
await app.close();
await backend.close();
