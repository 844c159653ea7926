/**
 * `npm run bench:scanner`: the scanner's rounds as production runs them, on PostgreSQL + NATS
 * (PGlite and the in-process bus when PostgreSQL is unreachable). BENCH_LISTINGS listings
 * (default 10,000) point at one local seller answering a matching x402 v2 402; each round
 * makes every probe timer due at once, and the engine does the rest: the sweeper claims the
 * timers, the consumer applies `listing.probe_due`, the scanner probes (bounded concurrency)
 * and applies `listing.probed`. Prints per round the probes/s and the process's RSS and heap
 * after a GC before and after it: memory must stay flat from round to round. Issue 21's
 * target: 10,000 listings probed per 10-minute round. The run fails (exit 1, each miss named)
 * when a round is not done within its budget, a probe is not `ok`, the seller saw more or fewer
 * requests than probes recorded (a listing probed twice in a round, or one lost), or the heap
 * after GC grew past the allowance from the first round's end to the last's.
 * Env: BENCH_LISTINGS, BENCH_ROUNDS (default 3), BENCH_CONCURRENCY (the scanner's, default 64),
 * BENCH_ROUND_BUDGET_S (default 600), BENCH_HEAP_GROWTH_MIB (default 16).
 */
import { databaseTransport } from './bench-env.ts';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { encodePaymentRequiredHeader } from '@x402/core/http';
import { USDC_TOKEN } from '../../machines/money/market.ts';
import { Engine } from '../../runtime/engine/runtime.ts';
import { machineRegistry } from '../../runtime/machines.ts';
import { resourceIdOf } from '../../runtime/market/listing-signature.ts';
import { Scanner } from '../../runtime/market/scanner/scanner.ts';
import { drive } from './stats.ts';

const { openEmbedded, openReal, postgresReachable } = await import('../helpers/backends.ts');

const LISTINGS = Number(process.env.BENCH_LISTINGS ?? 10_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CONC = Number(process.env.BENCH_CONCURRENCY ?? 64);
const ROUND_BUDGET_S = Number(process.env.BENCH_ROUND_BUDGET_S ?? 600);
const HEAP_GROWTH_MIB = Number(process.env.BENCH_HEAP_GROWTH_MIB ?? 16);
/** Why the run missed its targets; empty: met. */
const misses: string[] = [];
const PAY_TO = '0x00000000000000000000000000000000000b0b00';
const PRICE = '10000';

const required = encodePaymentRequiredHeader({
  x402Version: 2,
  error: 'Payment required',
  resource: { url: 'http://127.0.0.1/s', description: 'bench', mimeType: 'application/json' },
  accepts: [{ scheme: 'exact', network: 'eip155:8453', asset: USDC_TOKEN.address, amount: PRICE, payTo: PAY_TO, maxTimeoutSeconds: 60, extra: { name: USDC_TOKEN.name, version: USDC_TOKEN.version } }],
});
let served = 0;
const seller = http.createServer((_req, res) => {
  served++;
  res.writeHead(402, { 'payment-required': required, 'content-type': 'application/json' }).end('{}');
});
seller.listen(0, '127.0.0.1');
await new Promise((r) => seller.once('listening', r));
const base = `http://127.0.0.1:${(seller.address() as AddressInfo).port}`;

const backend = (await postgresReachable()) ? await openReal({ poolSize: 16 }) : await openEmbedded();
let probed = 0;
let failed = 0;
// The hook runs only once the engine has started, after `scanner` exists.
const engine: Engine = new Engine({ db: backend.db, bus: backend.bus, registry: machineRegistry(), hooks: { afterCommit: (r, e): void => scanner.afterCommit(r, e) }, sweeper: { pollMs: 50, batch: 500 } });
// Rounds an hour apart: the bench makes each round due itself, so none starts by accident.
const scanner: Scanner = new Scanner(backend.db, engine.host, {
  forward: { allowPrivate: true },
  intervalMs: 3_600_000,
  concurrency: CONC,
  onProbed: (_id, r) => (r.outcome === 'ok' ? probed++ : failed++),
  onError: () => failed++,
});
process.stdout.write(`backend ${backend.name} (${backend.name === 'postgres+nats' ? databaseTransport(process.env.DATABASE_URL ?? '') : 'PGlite'}); ${LISTINGS} listings, ${ROUNDS} rounds, ${CONC} probes in flight\n`);
// Registered with their first probe an hour out: the rounds below are the only ones.
await drive(LISTINGS, 16, async (i) => {
  const endpoint = `${base}/s${i}`;
  await engine.host.apply({ kind: 'listing', id: resourceIdOf('GET', endpoint) }, {
    type: 'listing.register', id: `r${i}`, at: Date.now(), probe_in_ms: 3_600_000, resource_id: resourceIdOf('GET', endpoint), provider_id: 'prov_b0b0',
    name: `bench ${i}`, description: 'bench', category: 'bench', tags: [], endpoint, method: 'GET', model: 'per_call',
    assets: [{ asset: 'USDC', pay_to: PAY_TO, seller_price_atomic: PRICE }],
    documentation_url: null, request_schema: null, response_schema: null, example_request: null, example_response: null,
  });
});
await engine.start({ feed: false });

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) misses.push('run with --expose-gc (npm run bench:scanner): the heap is compared after a GC');
const heapAfterRounds: number[] = [];
const mem = (): { text: string; heap: number } => {
  gc?.();
  const m = process.memoryUsage();
  return { text: `rss ${(m.rss / 2 ** 20).toFixed(0)} MiB, heap ${(m.heapUsed / 2 ** 20).toFixed(0)} MiB`, heap: m.heapUsed / 2 ** 20 };
};
for (let round = 1; round <= ROUNDS; round++) {
  const before = mem().text;
  const start = probed + failed;
  const t0 = performance.now();
  await backend.db.query(`UPDATE timers SET fire_at = now() WHERE kind = 'listing' AND name = 'probe'`);
  let late = false;
  while (probed + failed - start < LISTINGS) {
    if (performance.now() - t0 > ROUND_BUDGET_S * 1000) {
      misses.push(`round ${round}: ${probed + failed - start} of ${LISTINGS} probes done within ${ROUND_BUDGET_S} s`);
      late = true;
      break;
    }
    await new Promise((r) => setTimeout(r, 500));
    if (process.env.BENCH_DIAG) {
      const { rows } = await backend.db.query<{ n: string }>(`SELECT count(*)::text AS n FROM timers WHERE fired_at IS NOT NULL`);
      process.stdout.write(`  ${((performance.now() - t0) / 1000).toFixed(1)} s: fired-unspent ${rows[0]!.n}, scanner pending ${scanner.pending}, done ${probed + failed - start}\n`);
    }
  }
  // A round not done in time leaves probes running: the next round's count would be wrong.
  if (late) break;
  await scanner.idle();
  const s = (performance.now() - t0) / 1000;
  if (s > ROUND_BUDGET_S) misses.push(`round ${round}: ${s.toFixed(1)} s, over the ${ROUND_BUDGET_S} s budget`);
  const after = mem();
  heapAfterRounds.push(after.heap);
  process.stdout.write(`round ${round}: ${LISTINGS} probes in ${s.toFixed(1)} s = ${Math.round(LISTINGS / s)} probes/s (not ok: ${failed}); before ${before}; after ${after.text}\n`);
}
process.stdout.write(`seller served ${served} requests for ${ROUNDS * LISTINGS} probes\n`);
if (failed > 0) misses.push(`${failed} probes not ok`);
if (misses.length === 0 && served !== ROUNDS * LISTINGS) misses.push(`the seller served ${served} requests for ${ROUNDS * LISTINGS} probes`);
const growth = (heapAfterRounds.at(-1) ?? 0) - (heapAfterRounds[0] ?? 0);
if (gc && growth > HEAP_GROWTH_MIB) misses.push(`heap after GC grew ${growth.toFixed(1)} MiB from round 1 to round ${heapAfterRounds.length} (allowed ${HEAP_GROWTH_MIB} MiB)`);
await engine.stop();
seller.closeAllConnections();
seller.close();
await backend.close();
process.stdout.write(misses.length === 0 ? `targets met: every round within ${ROUND_BUDGET_S} s, each probe once, heap flat (+${growth.toFixed(1)} MiB)\n` : `FAILED:\n${misses.map((m) => `  ${m}`).join('\n')}\n`);
if (misses.length > 0) process.exitCode = 1;
