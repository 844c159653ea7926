/**
 * `npm run bench:chain`, devnet part: block production with 1,000-transaction blocks of
 * two-output payments. Measures, in-process and over JSON-RPC/HTTP: transactions accepted
 * per second (each one fully verified: decode, checks, ML-DSA-65 signature), the time to
 * mine a full block, to fetch it with `full = true`, and a depth-1 reorg of a full block.
 * The indexer part of this benchmark is added by the indexer's owner.
 * Env: BENCH_BLOCKS (default 2), BENCH_BLOCK_TXS (default 1000), BENCH_CONCURRENCY (default 16).
 */
import os from 'node:os';
import { DevnetNode } from '../../runtime/chain/devnet/node.ts';
import { startDevnetServer } from '../../runtime/chain/devnet/server.ts';
import { verifyBackendName, verifyTransaction } from '../../runtime/chain/codec/verify.ts';
import { NETWORKS } from '../../machines/chain/index.ts';
import { AnmRpcClient } from '../../runtime/chain/rpc-client.ts';
import { loadCorpus } from './devnet-corpus.ts';
import { drive, fmt } from './stats.ts';

const BLOCKS = Number(process.env.BENCH_BLOCKS ?? 2);
const PER_BLOCK = Number(process.env.BENCH_BLOCK_TXS ?? 1000);
const CONC = Number(process.env.BENCH_CONCURRENCY ?? 16);
const FUND = 10n ** 15n;

const ms = (t0: number): number => performance.now() - t0;

console.log(`bench:chain (devnet) — Node ${process.version}, ${os.cpus().length} CPU(s) ${os.cpus()[0]?.model ?? ''}, verify backend ${verifyBackendName()}`);
console.log(`${BLOCKS} block(s) of ${PER_BLOCK} two-output payments from 100 senders`);
const corpus = await loadCorpus(BLOCKS, PER_BLOCK);

// ---- in-process: the node itself -----------------------------------------------------
{
  // the floor: verifyTransaction alone over the first block, to show what the node adds on top
  const first = corpus.blocks[0]!;
  const tv = performance.now();
  for (const hex of first) if (!verifyTransaction(hex, NETWORKS.test).ok) throw new Error('corpus tx does not verify');
  const verifyMs = ms(tv) / first.length;
  const node = new DevnetNode({ network: 'test', maxBlockTxs: PER_BLOCK });
  for (const s of corpus.senders) node.faucet(s.address, FUND);
  let acceptMs = 0;
  let mineMs = 0;
  for (const txs of corpus.blocks) {
    let t0 = performance.now();
    for (const hex of txs) node.sendRawTransaction(hex);
    acceptMs += ms(t0);
    t0 = performance.now();
    const [b] = node.mine(1);
    mineMs += ms(t0);
    if (b!.txs.length !== PER_BLOCK || b!.txs.some((t) => t.status !== 'success')) throw new Error('block not full of successful payments');
  }
  const n = BLOCKS * PER_BLOCK;
  const t0 = performance.now();
  node.reorg(1);
  const reorgMs = ms(t0);
  const count = node.blockAt(node.height - 1)!.txs.length;
  console.log('\nin-process DevnetNode');
  console.log(`  verifyTransaction alone: ${fmt(1000 / verifyMs)} tx/s  (${fmt(verifyMs, 2)} ms/tx)`);
  console.log(`  accepted (anm_sendRawTransaction path, verified): ${fmt(n / (acceptMs / 1000))} tx/s  (${fmt(acceptMs / n, 2)} ms/tx)`);
  console.log(`  mined: ${fmt(mineMs / BLOCKS, 1)} ms per ${PER_BLOCK}-tx block  (${fmt(n / (mineMs / 1000))} tx/s executed)`);
  console.log(`  accept + mine: ${fmt(n / ((acceptMs + mineMs) / 1000))} tx/s`);
  console.log(`  dev_reorg(1) of a ${count}-tx block (undo, return to mempool, re-mine 2 blocks): ${fmt(reorgMs, 1)} ms`);
  node.close();
}

// ---- over HTTP: JSON-RPC through AnmRpcClient -----------------------------------------
{
  const server = await startDevnetServer({ port: 0, blockMs: 0, maxBlockTxs: PER_BLOCK });
  const rpc = new AnmRpcClient(`${server.url}/test`);
  for (const s of corpus.senders) await rpc.faucet(s.address, FUND);
  let acceptMs = 0;
  let mineMs = 0;
  let fetchMs = 0;
  for (const txs of corpus.blocks) {
    // one sender's nonces must arrive in order: a worker takes every CONC-th sender's column
    let t0 = performance.now();
    const perSender = PER_BLOCK / corpus.senders.length;
    await drive(corpus.senders.length, Math.min(CONC, corpus.senders.length), async (i) => {
      for (let k = 0; k < perSender; k++) await rpc.sendRawTransaction(txs[k * corpus.senders.length + i]!);
    });
    acceptMs += ms(t0);
    t0 = performance.now();
    const { head } = await rpc.mine(1);
    mineMs += ms(t0);
    t0 = performance.now();
    const block = await rpc.getBlockByNumber(head.height, true);
    fetchMs += ms(t0);
    if (block?.transactions.length !== PER_BLOCK) throw new Error('block over RPC is not full');
  }
  const n = BLOCKS * PER_BLOCK;
  console.log(`\nJSON-RPC over HTTP (AnmRpcClient, ${CONC} concurrent senders)`);
  console.log(`  accepted: ${fmt(n / (acceptMs / 1000))} tx/s`);
  console.log(`  dev_mine(1): ${fmt(mineMs / BLOCKS, 1)} ms per ${PER_BLOCK}-tx block`);
  console.log(`  anm_getBlockByNumber(h, true): ${fmt(fetchMs / BLOCKS, 1)} ms per ${PER_BLOCK}-tx block`);
  console.log(`  accept + mine: ${fmt(n / ((acceptMs + mineMs) / 1000))} tx/s`);
  await server.close();
}
