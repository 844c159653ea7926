/**
 * A reusable corpus of signed test-network payments for chain benchmarks: `blocks` blocks of
 * `perBlock` two-output payments from 100 seeded senders, nonces in order. Signing ML-DSA-65
 * costs ~10-16 ms per transaction here, so the corpus is signed once (deterministically) and
 * cached under .data/bench/; later runs load it in a second.
 */
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
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

export async function loadCorpus(blocks: number, perBlock: number, dir = '.data/bench'): Promise<Corpus> {
  if (perBlock % BENCH_SENDERS !== 0) throw new Error(`perBlock must be a multiple of ${BENCH_SENDERS}`);
  const senders = Array.from({ length: BENCH_SENDERS }, (_, i) => walletFromSeed(seed(0xbe, i), 'test'));
  const merchant = walletFromSeed(seed(0xa1, 0), 'test').address;
  const treasury = walletFromSeed(seed(0xa2, 0), 'test').address;
  const file = path.join(dir, `devnet-corpus-v1-${blocks}x${perBlock}.json`);
  // Block b's transactions depend on b alone (nonces and references follow from it), so a
  // cached corpus of another length serves as this one's prefix, or is cut down to it.
  const cached = await largestCached(dir, perBlock);
  if (cached && cached.length >= blocks) return { senders, merchant, treasury, blocks: cached.slice(0, blocks) };
  const perSender = perBlock / BENCH_SENDERS;
  const out: string[][] = cached ?? [];
  const t0 = performance.now();
  for (let b = out.length; b < blocks; b++) {
    const txs: string[] = [];
    for (let k = 0; k < perSender; k++) {
      const nonce = BigInt(b * perSender + k);
      for (const [i, s] of senders.entries()) {
        const ref = new Uint8Array(20);
        new DataView(ref.buffer).setUint32(0, b * perBlock + k * BENCH_SENDERS + i);
        const tx = {
          chain_id: NETWORKS.test.chainId,
          from_public_key: s.publicKey,
          nonce,
          outputs: [
            { to: merchant, amount: 980_000n },
            { to: treasury, amount: 20_000n },
          ],
          reference: paymentReference(ref),
          fee: 10n,
        };
        txs.push(encodeSignedTx(signTx(tx, s.secretKey)));
      }
    }
    out.push(txs);
    process.stderr.write(`signed block ${b + 1}/${blocks} of the corpus (${((performance.now() - t0) / 1000).toFixed(1)} s)\n`);
  }
  await mkdir(dir, { recursive: true });
  await writeFile(file, JSON.stringify({ blocks: out }));
  return { senders, merchant, treasury, blocks: out };
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
