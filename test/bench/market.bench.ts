/**
 * `npm run bench:market`: the marketplace over real HTTP on PostgreSQL + NATS. Measures in one run: a bare Fastify route, search over
 * BENCH_LISTINGS listings (default 10,000), quotes, purchases (two EIP-712 verifications and
 * a durable commit each), and the raw EIP-712 verify rate; the same quote and purchase on the
 * ANM lane (a devnet in a process of its own as its node: two ML-DSA-65 verifications and the
 * node's nonce and balance reads per purchase); prints each rate with its ratio to the bare
 * route and to the raw verify rate. Issue 20's targets: quotes >= 2,000/s p99 <= 50 ms,
 * purchases >= 1,000/s p99 <= 50 ms, search >= 5,000/s p99 <= 20 ms.
 * Env: BENCH_MARKET_WORKERS (the service's worker processes, default 1: on 2 cores a second
 * worker costs more CPU per request than it adds, docs/benchmarks.md),
 * BENCH_PACED_RATE (the paced search rows' rate, default 5,000/s), BENCH_PACED_QUOTE_RATE (the
 * paced quote row's, default 2,000/s), BENCH_PACED_PURCHASE_RATE (the paced purchase row's,
 * default 1,000/s: distinct purchases quoted and signed beforehand, as many as it asks),
 * BENCH_LISTINGS, BENCH_OPS (per measurement, default 5,000), BENCH_ANM_OPS (ANM purchases,
 * signed beforehand: default 2,000), BENCH_CONCURRENCY (32), BENCH_ROWS (comma-separated: the rows
 * to run of `bare`, `search`, `search-new`, `paced-search`, `paced-search-new`, `paced-quote`,
 * `paced-purchase`, `quote`, `quote-anm`, `purchase`, `purchase-anm`, or `paced` for the four
 * paced rows; default all; the raw verify rate needs `purchase` or `paced-purchase`),
 * BENCH_RPC_BATCH=0 (the service's reads of the ANM node one request each, not one batch per
 * turn: ADR 0107), BENCH_TRACE=1 (each purchase row also prints, from the service, where its median and its
 * slowest purchases spent their time: test/bench/purchase-trace.ts).
 * The service runs as in production with MARKET_WORKERS (ADR 0051): BENCH_MARKET_WORKERS
 * processes sharing one port (test/bench/market-serve.ts, with the young generation `npm
 * start` gives), the bare route served by as many; this process registers the listings and
 * prepares quotes and signed legs. The load comes from another process (wrk, or a Node process
 * without it: test/bench/request-load.ts), every request of a row written out beforehand. On a
 * shared machine wall-clock rates swing with the load, so each row also gives the CPU spent per
 * request by the service (its primary and every worker, summed), by its PostgreSQL backends
 * (found by application_name) and by the load generator, and how busy the whole machine was;
 * GC is summed over the workers, the stall is the longest of any; the raw verify rate is given
 * per CPU second as well.
 */
// First: with no DATABASE_URL it points the bench at the local Unix socket.
import { databaseTransport } from './bench-env.ts';
import path from 'node:path';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { runPaced, type Figures } from './paced-run.ts';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { ActorHost } from '../../runtime/engine/actor-host.ts';
import { machineRegistry } from '../../runtime/machines.ts';
import { openMarket } from '../../runtime/market/index.ts';
import { resourceIdOf } from '../../runtime/market/listing-signature.ts';
import { signLeg } from '../fixtures/market.ts';
import { DEFAULT_TIMEOUT_S } from '../../runtime/market/requirements.ts';
import { backendsCpu, busyShare, machineTicks } from './proc-cpu.ts';
import { drive, fmt } from './stats.ts';
import { rawVerifyRates } from './raw-verify.ts';
import { marketAnmRpc, spawnDevnet, spawnMarketServe } from './serve-children.ts';
import { LOAD_GENERATOR, runRequests, type LoadRequest } from './request-load.ts';
import { generateWallet } from '../../runtime/chain/codec/keys.ts';
import { encodeAddress, NETWORKS } from '../../machines/chain/index.ts';
import { ExactAnmSplitScheme } from '../../runtime/market/client/exact-anm-split.ts';
import { sha256 } from '@noble/hashes/sha2.js';
import { utf8ToBytes } from '@noble/hashes/utils.js';

const APP = `anm-market-bench-${process.pid}`;
// The pool's backends carry this name, so their CPU can be told from other users' of the server.
{
  const u = new URL(process.env.DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/test');
  u.searchParams.set('application_name', APP);
  process.env.DATABASE_URL = u.toString();
}
const { openReal, postgresReachable } = await import('../helpers/backends.ts');

const LISTINGS = Number(process.env.BENCH_LISTINGS ?? 10_000);
const OPS = Number(process.env.BENCH_OPS ?? 5_000);
const CONC = Number(process.env.BENCH_CONCURRENCY ?? 32);
const PACED_RATE = Number(process.env.BENCH_PACED_RATE ?? 5_000);
const PACED_SECONDS = 5;
const ANM_OPS = Number(process.env.BENCH_ANM_OPS ?? Math.min(OPS, 2_000));
const WORKERS = Number(process.env.BENCH_MARKET_WORKERS ?? 1);
const PACED_QUOTE_RATE = Number(process.env.BENCH_PACED_QUOTE_RATE ?? 2_000);
const PACED_PURCHASE_RATE = Number(process.env.BENCH_PACED_PURCHASE_RATE ?? 1_000);
const PACED_ROWS = ['paced-search', 'paced-search-new', 'paced-quote', 'paced-purchase'];
const ALL_ROWS = ['bare', 'search', 'search-new', ...PACED_ROWS, 'quote', 'quote-anm', 'purchase', 'purchase-anm'];
const ROWS = new Set((process.env.BENCH_ROWS ?? ALL_ROWS.join(',')).split(',').flatMap((r) => (r === 'paced' ? PACED_ROWS : [r.trim()])));
for (const r of ROWS) if (!ALL_ROWS.includes(r)) throw new Error(`BENCH_ROWS: no row ${r} (rows: ${ALL_ROWS.join(', ')}, paced)`);
const FEE = { USDC: '0x000000000000000000000000000000000000fee5', ANM: encodeAddress(NETWORKS.live.hrp, sha256(utf8ToBytes('bench fee'))) };
const ANM_SELLER = generateWallet('live').address;
const WORDS = ['weather', 'translate', 'geocode', 'sentiment', 'images', 'stocks', 'news', 'ocr', 'speech', 'search'];

// Several processes share the database: PGlite, one process's, cannot be it.
if (!(await postgresReachable())) throw new Error('bench:market needs PostgreSQL (DATABASE_URL): the service runs as BENCH_MARKET_WORKERS processes');
const backend = await openReal({ poolSize: 16 });
const host = new ActorHost({ db: backend.db, bus: backend.bus, registry: machineRegistry() });
// The ANM lane's node: a devnet in another process (mines only on request; nothing is submitted here).
const devnet = await spawnDevnet();
const anmRpc = marketAnmRpc(`${devnet.url}/live`);
const market = openMarket(backend.db, host, { feeAddresses: FEE, anm: { rpc: anmRpc } });
const seller = privateKeyToAccount(generatePrivateKey());
process.stdout.write(`backend ${backend.name} (${databaseTransport(process.env.DATABASE_URL)}); registering ${LISTINGS} listings…\n`);
await drive(LISTINGS, 16, async (i) => {
  const endpoint = `https://seller${i}.example/api`;
  const word = WORDS[i % WORDS.length]!;
  await host.apply({ kind: 'listing', id: resourceIdOf('GET', endpoint) }, {
    type: 'listing.register', id: `r${i}`, at: Date.now(), resource_id: resourceIdOf('GET', endpoint), provider_id: 'prov_b0b0',
    name: `${word} service ${i}`, description: `A ${word} API number ${i}`, category: word, tags: [word, `t${i % 97}`], endpoint, method: 'GET', model: 'per_call',
    // ANM at 0.5: over the searches' 0.02 ceiling, so they match the same listings as USDC-only ones would.
    assets: [
      { asset: 'USDC', pay_to: seller.address, seller_price_atomic: String(10_000 + (i % 1000)) },
      { asset: 'ANM', pay_to: ANM_SELLER, seller_price_atomic: String(500_000_000 + i) },
    ],
    documentation_url: null, request_schema: null, response_schema: null, example_request: null, example_response: null,
  });
});
// This process's market prepares quotes and funds buyers; the service is the workers.
await market.start(60_000, { watch: false });
// BENCH_SERVE_NODE_ARGS: more flags for the service's processes (`--cpu-prof --cpu-prof-dir=…` to profile them).
const serve = await spawnMarketServe({
  nodeArgs: ['--max-semi-space-size=32', ...(process.env.BENCH_SERVE_NODE_ARGS?.split(' ').filter(Boolean) ?? [])],
  env: { SERVE_WORKERS: String(WORKERS), SERVE_SCHEMA: backend.schema!, SERVE_NAMESPACE: backend.namespace!, SERVE_POOL: String(Math.ceil(16 / WORKERS)), SERVE_ANM_RPC: `${devnet.url}/live`, SERVE_FEE_USDC: FEE.USDC, SERVE_FEE_ANM: FEE.ANM },
});
const { url, bareUrl } = serve;
process.stdout.write(`service: ${WORKERS} worker process(es) on one port (BENCH_MARKET_WORKERS) and their primary; the bare route served by as many\n`);
const serviceCpu = (): number => serve.cpu();

interface Row {
  name: string;
  rate: number;
  p50: number;
  p99: number;
  /** CPU ms per request: the service (its processes), its PostgreSQL backends, the load generator. */
  nodeMs: number;
  pgMs: number;
  loadMs: number;
  /** The service's garbage collection per request, and its event loops' longest stall (GC or a long task): what p99 pays. */
  gcMs: number;
  stallMs: number;
  /** The longest single collection and the number of full ones. */
  gcMaxMs: number;
  fullGcs: number;
  busy: number;
}
const backendPids = async (): Promise<number[]> => (await backend.db.query<{ pid: number }>(`SELECT pid FROM pg_stat_activity WHERE application_name = $1`, [APP])).rows.map((r) => r.pid);

/** `count` requests (`requests` round robin) from the load generator's process; any answer but 2xx stops the bench. */
async function measure(name: string, base: string, requests: readonly LoadRequest[], count = OPS): Promise<Row> {
  await serve.begin();
  const cpu0 = serviceCpu();
  const ticks0 = machineTicks();
  const { out: r, cpu: pg } = await backendsCpu(backendPids, runRequests({ url: base, requests, count, connections: CONC }));
  const cpu = serviceCpu() - cpu0;
  const { gcMs, stallMs, gcMaxMs, fullGcs } = await serve.end();
  if (r.non2xx || r.errors) throw new Error(`${name}: ${r.non2xx} answers not 2xx, ${r.errors} errors`);
  const n = r.requests;
  return { name, rate: r.rps, p50: r.p50, p99: r.p99, nodeMs: (cpu * 1000) / n, pgMs: (pg * 1000) / n, loadMs: (r.loadCpuS * 1000) / n, gcMs: gcMs / n, stallMs, gcMaxMs, fullGcs, busy: busyShare(ticks0, machineTicks()) };
}

const get = (p: string): LoadRequest => ({ method: 'GET', path: p });
const post = (p: string, body: unknown, headers?: Record<string, string>): LoadRequest => ({ method: 'POST', path: p, body: JSON.stringify(body), ...(headers && { headers }) });
const each = <T>(n: number, f: (i: number) => T): T[] => Array.from({ length: n }, (_, i) => f(i));

const rows: Row[] = [];
const row = async (key: string, f: () => Promise<Row>): Promise<void> => {
  if (ROWS.has(key)) rows.push(await f());
};
await row('bare', () => measure('bare Fastify GET', bareUrl, [get('/bare')]));
await row('search', () => measure('search (10 words, repeated)', url, each(WORDS.length, (i) => get(`/api/v1/search?capability=${WORDS[i]!}&max_price=0.02&limit=10`))));
// Every query new, so none is answered from the index's kept answers: the cost of ranking.
await row('search-new', () => measure('search (each query new)', url, each(OPS, (i) => get(`/api/v1/search?capability=${WORDS[i % WORDS.length]!}+${i}&max_price=0.02&limit=10`))));

// The same searches paced at the target's rate (issue 20: 5,000/s), open loop from another
// process, latency counted from when each request was due: the p99 at that rate, not the
// queue of a saturated run. With the service's CPU, GC and longest stall, and the generator's CPU.
type PacedRow = { name: string; rate: number } & Figures & Omit<Row, 'name' | 'rate' | 'p50' | 'p99'>;
const pacedRows: PacedRow[] = [];
async function paced(key: string, name: string, rate: number, target: string, files: { paths?: string[]; bodies?: string[]; idempotencyKeys?: string }): Promise<void> {
  if (!ROWS.has(key)) return;
  const dir = mkdtempSync(path.join(tmpdir(), 'paced-'));
  writeFileSync(path.join(dir, 'cookies'), 'none\n');
  if (files.paths) writeFileSync(path.join(dir, 'paths'), files.paths.join('\n'));
  if (files.bodies) writeFileSync(path.join(dir, 'bodies'), files.bodies.join('\n'));
  await serve.begin();
  const cpu0 = serviceCpu();
  const ticks0 = machineTicks();
  const { out: f, cpu: pg } = await backendsCpu(
    backendPids,
    runPaced(target, path.join(dir, 'cookies'), { sessions: 50, pace: rate / 50, seconds: PACED_SECONDS, warmupS: 2, ...(files.paths && { pathsFile: path.join(dir, 'paths') }), ...(files.bodies && { bodiesFile: path.join(dir, 'bodies') }), ...(files.idempotencyKeys !== undefined && { idempotencyKeys: files.idempotencyKeys }) }),
  );
  const cpu = serviceCpu() - cpu0;
  const { gcMs, stallMs, gcMaxMs, fullGcs } = await serve.end();
  // Warm-up included: CPU and GC are over every request asked, counted or not.
  const n = rate * (PACED_SECONDS + 2);
  pacedRows.push({ name, rate, ...f, nodeMs: (cpu * 1000) / n, pgMs: (pg * 1000) / n, loadMs: f.loadMs, gcMs: gcMs / n, stallMs, gcMaxMs, fullGcs, busy: busyShare(ticks0, machineTicks()) });
}
await paced('paced-search', 'search (10 words, repeated)', PACED_RATE, url, { paths: each(WORDS.length, (i) => `/api/v1/search?capability=${WORDS[i]!}&max_price=0.02&limit=10`) });
await paced('paced-search-new', 'search (each query new)', PACED_RATE, url, { paths: each(PACED_RATE * (PACED_SECONDS + 2), (i) => `/api/v1/search?capability=${WORDS[i % WORDS.length]!}+p${i}&max_price=0.02&limit=10`) });
// Quotes paced at their target (issue 20: 2,000/s, p99 <= 50 ms), each a new purchase actor.
await paced('paced-quote', 'quote', PACED_QUOTE_RATE, `${url}/api/v1/route/quote`, { bodies: WORDS.map((w) => JSON.stringify({ capability: w, asset: 'USDC' })) });

type Prepared = { intent: string; legs: { seller: Awaited<ReturnType<typeof signLeg>>; fee: Awaited<ReturnType<typeof signLeg>> } };
let buyers: ReturnType<typeof privateKeyToAccount>[] | undefined;
/**
 * `n` purchases quoted and their legs signed, in the order they will be asked: a purchase
 * must be asked within DEFAULT_TIMEOUT_S of its quote, so the first asked are quoted first
 * and a preparation that leaves the last too little time (asked `askS` seconds after it) stops the bench.
 */
async function preparePurchases(n: number, askS: number): Promise<Prepared[]> {
  if (!buyers) {
    buyers = Array.from({ length: 16 }, () => privateKeyToAccount(generatePrivateKey()));
    for (const b of buyers) await market.ledger.fund(b.address, 10n ** 15n);
  }
  const by = buyers;
  const started = Date.now();
  const out: Prepared[] = new Array<Prepared>(n);
  await drive(n, 16, async (i) => {
    const q = await market.purchases.quote({ capability: WORDS[i % WORDS.length]!, asset: 'USDC' });
    const b = by[i % by.length]!;
    const legs = q.payment_requirements.accepts[0]!.extra.legs;
    out[i] = { intent: q.intent_id, legs: { seller: await signLeg(b, { to: legs.seller.payTo, value: legs.seller.amount }), fee: await signLeg(b, { to: legs.fee.payTo, value: legs.fee.amount }) } };
  });
  const spentS = (Date.now() - started) / 1000;
  process.stdout.write(`prepared ${fmt(n)} purchases in ${fmt(spentS, 1)} s\n`);
  if (spentS + askS > DEFAULT_TIMEOUT_S * 0.9) throw new Error(`purchases: ${fmt(spentS, 1)} s to prepare and ${askS} s to ask leave the first quotes too close to their ${DEFAULT_TIMEOUT_S} s expiry; ask fewer`);
  return out;
}
const purchaseBody = (p: Prepared): string => JSON.stringify({ intent_id: p.intent, payment: { legs: p.legs } });

let prepared: Prepared[] = [];
if (ROWS.has('paced-purchase')) {
  // Purchases paced at their target (issue 20: 1,000/s, p99 <= 50 ms), each a distinct quote
  // and legs, under an idempotency key of its own: as many as the row asks, warm-up included.
  const n = Math.ceil(PACED_PURCHASE_RATE * (PACED_SECONDS + 2));
  prepared = await preparePurchases(n, PACED_SECONDS + 2);
  await paced('paced-purchase', 'purchase', PACED_PURCHASE_RATE, `${url}/api/v1/purchase`, { bodies: prepared.map(purchaseBody), idempotencyKeys: 'p' });
}
await row('quote', () => measure('quote', url, each(WORDS.length, (i) => post('/api/v1/route/quote', { capability: WORDS[i], asset: 'USDC' }))));
await row('quote-anm', () => measure('quote (ANM)', url, each(WORDS.length, (i) => post('/api/v1/route/quote', { capability: WORDS[i], asset: 'ANM' }))));

if (ROWS.has('purchase')) {
  // Purchases: quotes and signed legs made first, so the measurement is verify + commit.
  const closed = await preparePurchases(OPS, 60);
  prepared = closed;
  rows.push(await measure('purchase', url, each(OPS, (i) => ({ method: 'POST', path: '/api/v1/purchase', body: purchaseBody(closed[i]!), headers: { 'idempotency-key': `b${i}` } }))));
}

if (ROWS.has('purchase-anm')) {
  // ANM purchases: legs signed beforehand by the buyers' ExactAnmSplitScheme, each buyer's
  // purchases on consecutive nonces (nothing is submitted, so every one is still unused).
  const anmBuyers = await Promise.all(
    Array.from({ length: 16 }, async () => {
      const keys = generateWallet('live');
      await anmRpc.faucet(keys.address, 10n ** 15n);
      let next = 0n;
      return new ExactAnmSplitScheme({ ...keys, nextNonce: () => Promise.resolve((next += 2n) - 2n) });
    }),
  );
  process.stdout.write(`signing ${ANM_OPS} ANM purchases (two ML-DSA-65 legs each)…\n`);
  const anmPrepared: Array<{ intent: string; legs: unknown }> = [];
  for (let i = 0; i < ANM_OPS; i++) {
    const q = await market.purchases.quote({ capability: WORDS[i % WORDS.length]!, asset: 'ANM' });
    const paid = await anmBuyers[i % anmBuyers.length]!.createPaymentPayload(2, q.payment_requirements.accepts[0]!);
    anmPrepared.push({ intent: q.intent_id, legs: paid.payload.legs });
  }
  rows.push(
    await measure(
      'purchase (ANM)',
      url,
      each(ANM_OPS, (i) => post('/api/v1/purchase', { intent_id: anmPrepared[i]!.intent, payment: { legs: anmPrepared[i]!.legs } }, { 'idempotency-key': `a${i}` })),
      ANM_OPS,
    ),
  );
}

// The raw EIP-712 verify rate on one leg in this process (needs a purchase row's legs).
const { ours: verify, viem: viemVerify } = await rawVerifyRates(prepared[0]?.legs.seller, OPS);

const bareRate = rows.find((r) => r.name === 'bare Fastify GET')?.rate ?? NaN;
process.stdout.write(
  `\nraw EIP-712 verify: ${fmt(verify.wall)}/s wall, ${fmt(verify.perCpuS)}/s per CPU second (viem recoverTypedDataAddress: ${fmt(viemVerify.wall)}/s wall, ${fmt(viemVerify.perCpuS)}/s per CPU second)\n`,
);
process.stdout.write(`load generator: ${LOAD_GENERATOR}, ${CONC} connections\n`);
process.stdout.write(`\n| measurement | ops/s | p50 ms | p99 ms | × bare | × raw verify | service CPU ms/op | PG CPU ms/op | load generator CPU ms/op | service GC ms/op | longest GC ms, full GCs | longest stall ms | machine busy |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|\n`);
for (const x of rows) {
  process.stdout.write(
    `| ${x.name} | ${fmt(x.rate)} | ${fmt(x.p50, 1)} | ${fmt(x.p99, 1)} | ${fmt(x.rate / bareRate, 2)} | ${fmt(x.rate / verify.wall, 2)} | ${fmt(x.nodeMs, 3)} | ${fmt(x.pgMs, 3)} | ${fmt(x.loadMs, 3)} | ${fmt(x.gcMs, 3)} | ${fmt(x.gcMaxMs, 1)}, ${x.fullGcs} | ${fmt(x.stallMs, 1)} | ${fmt(x.busy * 100)} % |\n`,
  );
}
process.stdout.write(
  `\npaced, asked by 50 clients in another process, ${PACED_SECONDS} s counted after 2 s of warm-up (CPU and GC per request asked, warm-up included):\n\n| measurement | asked/s | ops/s | p50 ms | p99 ms | not 2xx | service CPU ms/op | PG CPU ms/op | load generator CPU ms/op | service GC ms/op | longest GC ms, full GCs | longest stall ms | machine busy |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|\n`,
);
for (const x of pacedRows) {
  process.stdout.write(
    `| ${x.name} | ${fmt(x.rate)} | ${fmt(x.rps)} | ${fmt(x.p50, 1)} | ${fmt(x.p99, 1)} | ${x.non2xx} | ${fmt(x.nodeMs, 3)} | ${fmt(x.pgMs, 3)} | ${fmt(x.loadMs, 3)} | ${fmt(x.gcMs, 3)} | ${fmt(x.gcMaxMs, 1)}, ${x.fullGcs} | ${fmt(x.stallMs, 1)} | ${fmt(x.busy * 100)} % |\n`,
  );
}
market.stop();
await serve.stop();
devnet.close();
await backend.close();
