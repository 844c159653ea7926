/**
 * Indexer half of `npm run bench:chain`: blocks of 1,000 transactions with 10,000 open intents
 * on real PostgreSQL + NATS. Reports (1) scan + match + signals published, end to end through
 * the JSON-RPC, and (2) actor events committed by the router, counted separately. The devnet
 * node runs in a child process (`devnet-child.ts`), as a node would: the indexer follows it
 * over JSON-RPC, and the CPU of each side is reported apart.
 * Env: BENCH_BLOCKS (default 40: the timed tick lasts ~1.5 s. With 20 it lasted ~0.9 s, and
 * the fixed costs of a tick (filling the pipeline at its start, the depth signal at its end)
 * weighed more: the indexer's CPU per tx was 35-47 µs against 31-35 with 40 in alternating
 * runs; the signed corpus is made once, ~4 s per block with a worker per
 * core, and cached), BENCH_WARMUP_BLOCKS (default 3: indexed first
 * and not timed, so the figure is the steady state of a running indexer and not V8's compile
 * time), BENCH_OPEN_INTENTS (default 10000: open intents no block pays, so that many stay open
 * through the whole run besides the ones the blocks pay).
 */
import { machineRegistry } from '../../runtime/machines.ts';
import { databaseTransport } from './bench-env.ts';
import os from 'node:os';
import { paymentReference } from '../../machines/chain/index.ts';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { ChainIndexer } from '../../runtime/chain/indexer/indexer.ts';
import { startChainRouter } from '../../runtime/chain/indexer/router.ts';
import { AnmRpcClient } from '../../runtime/chain/rpc-client.ts';
import { ActorHost } from '../../runtime/engine/actor-host.ts';
import { DATABASE_URL, openReal, waitFor } from '../helpers/backends.ts';
import { natsServerPid, postgresServerCpu, procCpu } from './proc-cpu.ts';
import { drive, fmt } from './stats.ts';

const BLOCKS = Number(process.env.BENCH_BLOCKS ?? 40);
const WARMUP = Number(process.env.BENCH_WARMUP_BLOCKS ?? 3);
const PER_BLOCK = 1000;
const OPEN = Number(process.env.BENCH_OPEN_INTENTS ?? 10_000);
// Every MATCH_EVERY-th corpus transaction pays an open intent; the rest are unrelated transfers.
const MATCH_EVERY = Number(process.env.BENCH_MATCH_EVERY ?? 1);
// Blocks fetched and matched ahead of the one being recorded (the indexer's `pipeline` option).
const PIPELINE = Number(process.env.BENCH_PIPELINE ?? 4);

console.log(`# bench:chain indexer ${new Date().toISOString()} — ${os.cpus().length} cores, node ${process.version}`);
console.log(databaseTransport(DATABASE_URL));
console.log(`${BLOCKS} blocks of ${PER_BLOCK} txs timed after ${WARMUP} warm-up blocks; ${fmt(OPEN)} open intents besides the ones the blocks pay; every ${MATCH_EVERY === 1 ? '' : `${MATCH_EVERY}th `}tx pays one`);
const child = spawn(process.execPath, ['--expose-gc', '--import', 'tsx', 'test/bench/devnet-child.ts', String(WARMUP + BLOCKS), String(PER_BLOCK)], { stdio: ['pipe', 'pipe', 'inherit'] });
const first = await new Promise<string>((resolve, reject) => {
  createInterface({ input: child.stdout }).once('line', resolve);
  child.once('exit', (code) => reject(new Error(`devnet child exited with ${code}`)));
});
const devnet = JSON.parse(first) as { url: string; head: number; merchant: string; treasury: string };
const corpus = devnet;
const b = await openReal({ poolSize: 32 });
try {
  const host = new ActorHost({ db: b.db, bus: b.bus, registry: machineRegistry() });
  const now = Date.now();
  // One intent per MATCH_EVERY-th corpus transaction (the warm-up blocks pay the first ones),
  // plus OPEN intents whose references lie past the corpus: they stay open throughout.
  const paid = Math.ceil(((WARMUP + BLOCKS) * PER_BLOCK) / MATCH_EVERY);
  const refIndex = (i: number): number => (i < paid ? i * MATCH_EVERY : (WARMUP + BLOCKS) * PER_BLOCK + (i - paid));
  const seeded = await drive(paid + OPEN, 32, async (i) => {
    const ref = new Uint8Array(20);
    new DataView(ref.buffer).setUint32(0, refIndex(i));
    const id = `pay_ib_${i}`;
    await host.apply(
      { kind: 'payment_intent', id, merchant: 'm_bench', mode: 'test' },
      {
        type: 'intent.create', id: `c${i}`, at: now, intent_id: id, merchant_id: 'm_bench', mode: 'test', currency: 'ANM', requested_amount: null,
        anm_amount: '1000000', payment_address: corpus.merchant, treasury_address: corpus.treasury, payment_reference: paymentReference(ref), expires_at: now + 3_600_000,
      },
    );
  });
  console.log(`${fmt(paid + OPEN)} open intents created (${fmt(seeded.rate)}/s): ${fmt(paid)} paid by the blocks, ${fmt(OPEN)} that stay open`);

  const head = devnet.head;

  const rpc = new AnmRpcClient(`${devnet.url}/test`);
  let warmSignals = 0;
  if (WARMUP > 0) {
    const warm = new ChainIndexer({ network: 'test', rpc, db: b.db, bus: b.bus, holder: 'bench', startHeight: 1, pollMs: 5, pipeline: PIPELINE, maxBlocksPerTick: WARMUP });
    await warm.tick();
    if (warm.stats.blocks !== WARMUP) throw new Error(`warm-up indexed ${warm.stats.blocks} of ${WARMUP} blocks`);
    warmSignals = warm.stats.signals;
  }
  // The timed indexer goes on from the warm-up's cursor (same lease holder).
  const indexer = new ChainIndexer({ network: 'test', rpc, db: b.db, bus: b.bus, holder: 'bench', startHeight: 1, pollMs: 5, pipeline: PIPELINE });
  // The timed part starts on a collected heap: the seeding above leaves garbage whose major
  // collection would otherwise land inside it in some runs and not in others.
  (globalThis as { gc?: () => void }).gc?.();
  // One tick follows the head from the cursor to the tip: timed alone, no polling delay inside.
  const cpu0 = process.cpuUsage();
  const node0 = procCpu(child.pid!);
  const natsPid = natsServerPid();
  const nats0 = natsPid ? procCpu(natsPid) : 0;
  const pg0 = postgresServerCpu();
  const t0 = performance.now();
  await indexer.tick();
  const scanS = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  const cpuUsPerTx = (cpu.user + cpu.system) / indexer.stats.txs;
  const nodeUsPerTx = ((procCpu(child.pid!) - node0) * 1e6) / indexer.stats.txs;
  const natsUsPerTx = natsPid ? ((procCpu(natsPid) - nats0) * 1e6) / indexer.stats.txs : NaN;
  const pgUsPerTx = ((postgresServerCpu() - pg0) * 1e6) / indexer.stats.txs;
  if (indexer.stats.blocks < head - WARMUP) throw new Error(`indexer stopped at ${indexer.stats.blocks} of ${head} blocks`);
  console.log(
    `indexer: ${fmt(indexer.stats.txs)} txs in ${fmt(indexer.stats.blocks)} blocks scanned, ${fmt(indexer.stats.matched)} matched, ${fmt(indexer.stats.signals)} signals published (${fmt(indexer.stats.messages)} bus messages) in ${fmt(scanS, 2)} s`,
  );
  console.log(`  scanned and matched end to end (RPC fetch + reference lookup + NATS publish + cursor): ${fmt(indexer.stats.txs / scanS)} tx/s`);
  console.log(`  CPU per tx: indexer process ${fmt(cpuUsPerTx, 1)} µs, devnet node process ${fmt(nodeUsPerTx, 1)} µs, PostgreSQL ${fmt(pgUsPerTx, 1)} µs, nats-server ${fmt(natsUsPerTx, 1)} µs (10 ms /proc resolution); load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);

  const t1 = performance.now();
  const router = await startChainRouter(b.bus, host, { concurrency: 64 });
  await waitFor(async () => {
    const { rows } = await b.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM actors WHERE kind = 'payment_intent' AND state = 'PAID'`);
    return rows[0]!.n >= paid;
  }, 600_000, 'all matched intents PAID');
  const applyS = (performance.now() - t1) / 1000;
  await router.stop();
  const routed = warmSignals + indexer.stats.signals;
  console.log(`router: ${fmt(routed)} actor events committed on PostgreSQL in ${fmt(applyS, 2)} s = ${fmt(routed / applyS)} events/s (${fmt(paid)} intents PAID)`);
} finally {
  child.stdin.end();
  await b.close();
}
