/**
 * A reusable corpus of signed test-network payments for chain benchmarks: `blocks` blocks of
 * `perBlock` two-output payments from 100 seeded senders, nonces in order. Signing ML-DSA-65
 * costs ~8 ms per transaction here, so the corpus is signed once (deterministically, one worker
 * thread per core: a block depends on its number alone) and cached under .data/bench/; later
 * runs load it in a second.
 */
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { NETWORKS, encodeSignedTx, paymentReference, signTx } from '../../machines/chain/index.ts';
import { walletFromSeed, type Wallet } from '../../runtime/chain/codec/keys.ts';

export const BENCH_SENDERS = 100;

export interface Corpus {
  senders: Wallet[];
  merchant: string;
  treasury: string;
  /** blocks[b] = signed hex transactions for block b, every sender's nonces in order. */
  blocks: string[][];
}

const seed = (tag: number, i: number): Uint8Array => {
  const s = new Uint8Array(32);
  s[0] = tag;
  new DataView(s.buffer).setUint32(28, i);
  return s;
};

let known: Omit<Corpus, 'blocks'> | undefined;

/** The senders' keys, made once per thread (102 key generations). */
function parties(): Omit<Corpus, 'blocks'> {
  return (known ??= {
    senders: Array.from({ length: BENCH_SENDERS }, (_, i) => walletFromSeed(seed(0xbe, i), 'test')),
    merchant: walletFromSeed(seed(0xa1, 0), 'test').address,
    treasury: walletFromSeed(seed(0xa2, 0), 'test').address,
  });
}

/** Block `b` of the corpus: its nonces and references follow from `b` alone. */
export function signBlock(b: number, perBlock: number): string[] {
  const p = parties();
  const perSender = perBlock / BENCH_SENDERS;
  const txs: string[] = [];
  for (let k = 0; k < perSender; k++) {
    const nonce = BigInt(b * perSender + k);
    for (const [i, s] of p.senders.entries()) {
      const ref = new Uint8Array(20);
      new DataView(ref.buffer).setUint32(0, b * perBlock + k * BENCH_SENDERS + i);
      const tx = {
        chain_id: NETWORKS.test.chainId,
        from_public_key: s.publicKey,
        nonce,
        outputs: [
          { to: p.merchant, amount: 980_000n },
          { to: p.treasury, amount: 20_000n },
        ],
        reference: paymentReference(ref),
        fee: 10n,
      };
      txs.push(encodeSignedTx(signTx(tx, s.secretKey)));
    }
  }
  return txs;
}

export async function loadCorpus(blocks: number, perBlock: number, dir = '.data/bench'): Promise<Corpus> {
  if (perBlock % BENCH_SENDERS !== 0) throw new Error(`perBlock must be a multiple of ${BENCH_SENDERS}`);
  const p = parties();
  const file = path.join(dir, `devnet-corpus-v1-${blocks}x${perBlock}.json`);
  // A cached corpus of another length serves as this one's prefix, or is cut down to it.
  const cached = await largestCached(dir, perBlock);
  if (cached && cached.length >= blocks) return { ...p, blocks: cached.slice(0, blocks) };
  const out: string[][] = cached ?? [];
  const missing = Array.from({ length: blocks - out.length }, (_, i) => out.length + i);
  const signed = await signInWorkers(missing, perBlock);
  for (const b of missing) out.push(signed.get(b)!);
  await mkdir(dir, { recursive: true });
  await writeFile(file, JSON.stringify({ blocks: out }));
  return { ...p, blocks: out };
}

/** Signs the blocks numbered `todo`, one worker thread per core taking the next number. */
async function signInWorkers(todo: number[], perBlock: number): Promise<Map<number, string[]>> {
  const done = new Map<number, string[]>();
  const queue = [...todo];
  const t0 = performance.now();
  const workers = Math.min(todo.length, Math.max(1, os.availableParallelism()));
  await Promise.all(
    Array.from({ length: workers }, async () => {
      // A worker does not inherit tsx's loader hooks (a .ts entry fails on Node 20 even with
      // `--import tsx`): a plain-JS entry registers them, then imports the worker module.
      const entry = JSON.stringify(new URL('./corpus-worker.ts', import.meta.url).href);
      const w = new Worker(`import('tsx/esm/api').then((t) => { t.register(); return import(${entry}); })`, { eval: true });
      try {
        for (let b = queue.shift(); b !== undefined; b = queue.shift()) {
          done.set(b, await signRemote(w, b, perBlock));
          process.stderr.write(`signed block ${b + 1} of the corpus (${done.size}/${todo.length} new, ${((performance.now() - t0) / 1000).toFixed(1)} s)\n`);
        }
      } finally {
        await w.terminate();
      }
    }),
  );
  return done;
}

function signRemote(w: Worker, b: number, perBlock: number): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const off = () => {
      w.off('message', onMessage);
      w.off('error', reject);
    };
    const onMessage = (txs: string[]) => {
      off();
      resolve(txs);
    };
    w.on('message', onMessage);
    w.once('error', reject);
    w.postMessage({ b, perBlock });
  });
}

async function largestCached(dir: string, perBlock: number): Promise<string[][] | null> {
  const names = await readdir(dir).catch(() => [] as string[]);
  let best: { n: number; name: string } | null = null;
  for (const name of names) {
    const m = /^devnet-corpus-v1-(\d+)x(\d+)\.json$/.exec(name);
    if (m && Number(m[2]) === perBlock && (!best || Number(m[1]) > best.n)) best = { n: Number(m[1]), name };
  }
  if (!best) return null;
  try {
    return (JSON.parse(await readFile(path.join(dir, best.name), 'utf8')) as { blocks: string[][] }).blocks;
  } catch {
    return null;
  }
}
