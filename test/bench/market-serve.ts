/**
 * The marketplace as bench:market serves it: SERVE_WORKERS processes on one port, supervised
 * by bin/market-workers.ts as MARKET_WORKERS does for `npm start` (ADR 0051), each with its
 * own pool, actor host and search index, per-IP limits lifted; and a bare Fastify route on a
 * port of its own served by as many processes, so the ratio to it compares like with like.
 * Worker 0 alone runs the seller-leg watch and the key sweep, as in the service.
 *
 * The primary prints `SERVE_JSON {"url","bareUrl","pids"}` (itself first, then the workers)
 * once every worker serves. On stdin, `begin` then `end` ask every worker for its garbage
 * collection time, longest collection, full collections and longest event-loop stall in between;
 * the primary prints `BEGUN` once every worker has begun, then `STATS_JSON {"gcMs","stallMs","gcMaxMs","fullGcs","counts"}` (sums, or the
 * longest of any worker). Stdin closed: it stops.
 * With SERVE_ROUTED=1 (bench:execute), each worker is wired as a marketplace process of `npm
 * start` is for routed execution: it relays the outbox rows its commits write (Engine does so in
 * the service), may call a seller on loopback (as ANMPAY_ALLOW_PRIVATE_WEBHOOKS=1 lets it), and counts its
 * statements (statement-count.ts), summed into STATS_JSON's `counts`.
 * With BENCH_TRACE=1, each worker marks the steps of every purchase between `begin` and `end`
 * and prints, at `end`, where the time of the median and of the slowest went (purchase-trace.ts).
 * Env: SERVE_WORKERS, DATABASE_URL, SERVE_SCHEMA, SERVE_NAMESPACE, SERVE_POOL (per worker),
 * SERVE_ANM_RPC, SERVE_FEE_USDC, SERVE_FEE_ANM, SERVE_ROUTED, BENCH_TRACE.
 */
import cluster from 'node:cluster';
import { createServer } from 'node:net';
import { constants, monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import Fastify from 'fastify';
import { marketWorkerIndex, reportWorkerReady, startMarketWorkers } from '../../bin/market-workers.ts';
import { buildMarketApp } from '../../gateway/market/app.ts';
import { NatsBus } from '../../runtime/bus/nats-bus.ts';
import { ActorHost } from '../../runtime/engine/actor-host.ts';
import { machineRegistry } from '../../runtime/machines.ts';
import { openMarket } from '../../runtime/market/index.ts';
import { OutboxRelay } from '../../runtime/engine/outbox-relay.ts';
import { openDb } from '../../storage/open.ts';
import { marketAnmRpc } from './serve-children.ts';
import { addCounts, NO_STATEMENTS, StatementCounter, type StatementCounts } from './statement-count.ts';

/** GC time summed; its longest pause and its full (mark-compact) collections, for what a p99 pays. */
type Stats = { type: 'bench:stats'; gcMs: number; stallMs: number; gcMaxMs: number; fullGcs: number; counts: StatementCounts };
const ROUTED = process.env.SERVE_ROUTED === '1';
const env = (name: string): string => {
  const v = process.env[name];
  if (!v) throw new Error(`market-serve: ${name} is not set`);
  return v;
};

if (cluster.isPrimary) await primary();
else await worker();

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const port = (s.address() as { port: number }).port;
  await new Promise((resolve) => s.close(resolve));
  return port;
}

async function primary(): Promise<void> {
  const ports = { market: await freePort(), bare: await freePort() };
  const workers = await startMarketWorkers({
    count: Number(env('SERVE_WORKERS')),
    env: { SERVE_MARKET_PORT: String(ports.market), SERVE_BARE_PORT: String(ports.bare) },
    exec: import.meta.filename,
    log: (msg) => process.stderr.write(`${msg}\n`),
  });
  let pending: Stats[] = [];
  let begun = 0;
  cluster.on('message', (_w, m: Stats | { type?: string }) => {
    if (m.type === 'bench:begun' && ++begun === workers.pids().length) {
      begun = 0;
      process.stdout.write('BEGUN\n');
    }
    if (m.type !== 'bench:stats') return;
    pending.push(m as Stats);
    if (pending.length < workers.pids().length) return;
    const sum = (f: (s: Stats) => number): number => pending.reduce((a, s) => a + f(s), 0);
    const max = (f: (s: Stats) => number): number => Math.max(...pending.map(f));
    process.stdout.write(`STATS_JSON ${JSON.stringify({ gcMs: sum((s) => s.gcMs), stallMs: max((s) => s.stallMs), gcMaxMs: max((s) => s.gcMaxMs), fullGcs: sum((s) => s.fullGcs), counts: pending.reduce((a, s) => addCounts(a, s.counts), NO_STATEMENTS) })}\n`);
    pending = [];
  });
  const tell = (type: string): void => {
    for (const w of Object.values(cluster.workers ?? {})) w?.send({ type });
  };
  process.stdout.write(`SERVE_JSON ${JSON.stringify({ url: workers.url, bareUrl: `http://127.0.0.1:${ports.bare}`, pids: [process.pid, ...workers.pids()] })}\n`);
  const lines = createInterface({ input: process.stdin });
  lines.on('line', (l) => tell(`bench:${l.trim()}`));
  lines.on('close', () => void workers.stop().then(() => process.exit(0)));
}

async function worker(): Promise<void> {
  const rawDb = await openDb({ databaseUrl: env('DATABASE_URL'), schema: env('SERVE_SCHEMA'), poolSize: Number(env('SERVE_POOL')) });
  const bus = await NatsBus.connect({ url: process.env.NATS_URL ?? 'nats://127.0.0.1:4222', namespace: env('SERVE_NAMESPACE') });
  const counter = new StatementCounter();
  const db = ROUTED ? counter.market(rawDb) : rawDb;
  const relay = ROUTED ? new OutboxRelay(counter.relay(rawDb), bus) : undefined;
  const host = new ActorHost({ db, bus, registry: machineRegistry(), ...(relay && { onOutbox: () => relay.nudge() }) });
  relay?.start();
  const market = openMarket(db, host, {
    feeAddresses: { USDC: env('SERVE_FEE_USDC'), ANM: env('SERVE_FEE_ANM') },
    anm: { rpc: marketAnmRpc(env('SERVE_ANM_RPC')) },
    ...(ROUTED && { forward: { allowPrivate: true } }),
  });
  if (ROUTED) counter.watchAnswers(market);
  await market.start(60_000, { watch: marketWorkerIndex() === 0 });
  const app = await buildMarketApp({ ...market, perIpPerMinute: 1e9 });
  // Loaded only when asked: without the flag the service runs unpatched.
  const trace = process.env.BENCH_TRACE === '1' ? (await import('./purchase-trace.ts')).tracePurchases({ app, market, databaseUrl: env('DATABASE_URL') }) : undefined;
  const url = await app.listen({ port: Number(env('SERVE_MARKET_PORT')), host: '127.0.0.1' });
  const bare = Fastify();
  bare.get('/bare', async () => ({ ok: true }));
  await bare.listen({ port: Number(env('SERVE_BARE_PORT')), host: '127.0.0.1' });

  let gc = 0;
  let gcMax = 0;
  let fullGcs = 0;
  const gcs = new PerformanceObserver((l) => {
    for (const e of l.getEntries()) {
      gc += e.duration;
      gcMax = Math.max(gcMax, e.duration);
      if ((e as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR) fullGcs++;
    }
  });
  const loop = monitorEventLoopDelay({ resolution: 5 });
  process.on('message', (m: { type?: string }) => {
    if (m.type === 'bench:begin') {
      gc = gcMax = fullGcs = 0;
      counter.take();
      loop.reset();
      gcs.observe({ entryTypes: ['gc'] });
      loop.enable();
      trace?.begin();
      process.send?.({ type: 'bench:begun' });
    } else if (m.type === 'bench:end') {
      loop.disable();
      const counts = counter.take();
      // GC entries reach observers some time after the pause: a short wait lets the last ones in.
      const reported = trace?.report().then((r) => void (r && process.stderr.write(`${r}\n`)));
      setTimeout(() => void Promise.resolve(reported).then(() => {
        gcs.disconnect();
        process.send?.({ type: 'bench:stats', gcMs: gc, stallMs: loop.max / 1e6, gcMaxMs: gcMax, fullGcs, counts } satisfies Stats);
      }), 50);
    }
  });
  let stopping = false;
  const stop = (): void => {
    if (stopping) return;
    stopping = true;
    market.stop();
    void Promise.all([app.close(), bare.close()])
      .then(() => relay?.stop())
      .then(() => Promise.all([bus.close(), rawDb.close()]))
      .finally(() => process.exit(0));
  };
  process.on('SIGTERM', stop);
  process.on('disconnect', stop);
  reportWorkerReady(url);
}
