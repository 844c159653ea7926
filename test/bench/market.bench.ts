/**
 * `npm run bench:market`: the marketplace over real HTTP on PostgreSQL + NATS (PGlite when
 * PostgreSQL is unreachable). Measures in one run: a bare Fastify route, search over
 * BENCH_LISTINGS listings (default 10,000), quotes, purchases (two EIP-712 verifications and
 * a durable commit each), and the raw EIP-712 verify rate; prints each rate with its ratio to
 * the bare route and to the raw verify rate. Issue 20's targets: quotes >= 2,000/s p99 <= 50 ms,
 * purchases >= 1,000/s p99 <= 50 ms, search >= 5,000/s p99 <= 20 ms.
 * Env: BENCH_LISTINGS, BENCH_OPS (per measurement, default 5,000), BENCH_CONCURRENCY (32).
 * The load generator runs in this process: its CPU counts against the service.
 */
import http from 'node:http';
import Fastify from 'fastify';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { buildMarketApp } from '../../gateway/market/app.ts';
import { ActorHost } from '../../runtime/engine/actor-host.ts';
import { machineRegistry } from '../../runtime/machines.ts';
import { openMarket } from '../../runtime/market/index.ts';
import { checkAuthorization, USDC_EXPECTED_BASE } from '../../runtime/market/lanes/eip3009.ts';
import { resourceIdOf } from '../../runtime/market/listing-signature.ts';
import { signLeg } from '../fixtures/market.ts';
import { openEmbedded, openReal, postgresReachable } from '../helpers/backends.ts';
import { drive, fmt, type RunStats } from './stats.ts';

const LISTINGS = Number(process.env.BENCH_LISTINGS ?? 10_000);
const OPS = Number(process.env.BENCH_OPS ?? 5_000);
const CONC = Number(process.env.BENCH_CONCURRENCY ?? 32);
const FEE = { USDC: '0x000000000000000000000000000000000000fee5', ANM: 'anm1fee' };
const WORDS = ['weather', 'translate', 'geocode', 'sentiment', 'images', 'stocks', 'news', 'ocr', 'speech', 'search'];

const agent = new http.Agent({ keepAlive: true, maxSockets: CONC });
function call(url: string, method: string, body?: unknown, headers: Record<string, string> = {}): Promise<number> {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const r = http.request({ method, hostname: u.hostname, port: u.port, path: u.pathname + u.search, agent, headers: { ...headers, ...(payload ? { 'content-type': 'application/json' } : {}) } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    r.on('error', reject);
    r.end(payload);
  });
}

const backend = (await postgresReachable()) ? await openReal({ poolSize: 16 }) : await openEmbedded();
const host = new ActorHost({ db: backend.db, bus: backend.bus, registry: machineRegistry() });
const market = openMarket(backend.db, host, { feeAddresses: FEE });
const seller = privateKeyToAccount(generatePrivateKey());
process.stdout.write(`backend ${backend.name}; registering ${LISTINGS} listings…\n`);
await drive(LISTINGS, 16, async (i) => {
  const endpoint = `https://seller${i}.example/api`;
  const word = WORDS[i % WORDS.length]!;
  await host.apply({ kind: 'listing', id: resourceIdOf('GET', endpoint) }, {
    type: 'listing.register', id: `r${i}`, at: Date.now(), resource_id: resourceIdOf('GET', endpoint), provider_id: 'prov_b0b0',
    name: `${word} service ${i}`, description: `A ${word} API number ${i}`, category: word, tags: [word, `t${i % 97}`], endpoint, method: 'GET', model: 'per_call',
    assets: [{ asset: 'USDC', pay_to: seller.address, seller_price_atomic: String(10_000 + (i % 1000)) }],
    documentation_url: null, request_schema: null, response_schema: null, example_request: null, example_response: null,
  });
});
await market.start(60_000);
const app = await buildMarketApp({ ...market, perIpPerMinute: 1e9 });
const url = await app.listen({ port: 0, host: '127.0.0.1' });
const bare = Fastify();
bare.get('/bare', async () => ({ ok: true }));
const bareUrl = await bare.listen({ port: 0, host: '127.0.0.1' });

const check = (want: number) => (status: number) => {
  if (status !== want) throw new Error(`status ${status}, expected ${want}`);
};
const results: Array<[string, RunStats]> = [];
results.push(['bare Fastify GET', await drive(OPS, CONC, () => call(`${bareUrl}/bare`, 'GET').then(check(200)))]);
results.push(['search (10 words)', await drive(OPS, CONC, (i) => call(`${url}/api/v1/search?capability=${WORDS[i % WORDS.length]!}&max_price=0.02&limit=10`, 'GET').then(check(200)))]);
results.push(['quote', await drive(OPS, CONC, (i) => call(`${url}/api/v1/route/quote`, 'POST', { capability: WORDS[i % WORDS.length], asset: 'USDC' }).then(check(201)))]);

// Purchases: quotes and signed legs made first, so the measurement is verify + commit.
const buyers = Array.from({ length: 16 }, () => privateKeyToAccount(generatePrivateKey()));
for (const b of buyers) await market.ledger.fund(b.address, 10n ** 15n);
const prepared = await Promise.all(
  Array.from({ length: OPS }, async (_, i) => {
    const q = await market.purchases.quote({ capability: WORDS[i % WORDS.length]!, asset: 'USDC' });
    const b = buyers[i % buyers.length]!;
    const legs = q.payment_requirements.accepts[0]!.extra.legs;
    return { intent: q.intent_id, legs: { seller: await signLeg(b, { to: legs.seller.payTo, value: legs.seller.amount }), fee: await signLeg(b, { to: legs.fee.payTo, value: legs.fee.amount }) } };
  }),
);
results.push(['purchase', await drive(OPS, CONC, (i) => call(`${url}/api/v1/purchase`, 'POST', { intent_id: prepared[i]!.intent, payment: { legs: prepared[i]!.legs } }, { 'idempotency-key': `b${i}` }).then(check(200)))]);

// The raw EIP-712 recover-and-compare rate, on one leg, in this process.
const leg = prepared[0]!.legs.seller;
const expected = { ...USDC_EXPECTED_BASE, payTo: leg.accepted.payTo, amount: BigInt(leg.accepted.amount) };
const verify = await drive(Math.min(OPS, 2_000), 1, () => checkAuthorization(leg.payload, expected, Math.floor(Date.now() / 1000)));

const bareRate = results[0]![1].rate;
process.stdout.write(`\n| measurement | ops/s | p50 ms | p99 ms | × bare | × raw verify (${fmt(verify.rate)}/s) |\n|---|---|---|---|---|---|\n`);
for (const [name, r] of results) process.stdout.write(`| ${name} | ${fmt(r.rate)} | ${fmt(r.p50, 1)} | ${fmt(r.p99, 1)} | ${fmt(r.rate / bareRate, 2)} | ${fmt(r.rate / verify.rate, 2)} |\n`);
market.stop();
await app.close();
await bare.close();
agent.destroy();
await backend.close();
