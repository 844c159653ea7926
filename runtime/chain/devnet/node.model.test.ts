/**
 * Random schedules of transfers, blocks and reorgs (with drops) against the devnet node.
 * After every step the node's state must equal a replay of its canonical chain from the
 * genesis credits: balances, nonces and every receipt's status, the parent-hash chain, and
 * supply = credits − burned fees. This is what makes dev_reorg's undo trustworthy.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ZERO_HASH, blockHash } from './block.ts';
import { seededWallet, signedTransfer } from './fixtures.test-util.ts';
import { DevnetNode } from './node.ts';

const wallets = [seededWallet(11), seededWallet(12), seededWallet(13)];
const CREDIT = 100n;
const AMOUNTS = [5n, 30n, 90n]; // 90 + fee often fails: failed receipts on purpose
const FEE = 1n;

const signed = new Map<string, string>();
function raw(from: number, nonce: bigint, variant: number): string {
  const key = `${from}/${nonce}/${variant}`;
  let hex = signed.get(key);
  if (!hex) {
    const to = wallets[(from + 1 + (variant % 2)) % wallets.length]!.address;
    hex = signedTransfer(wallets[from]!, { nonce, outputs: [{ to, amount: AMOUNTS[variant]! }], fee: FEE });
    signed.set(key, hex);
  }
  return hex;
}

type Op =
  | { kind: 'send'; from: number; variant: number }
  | { kind: 'mine'; n: number }
  | { kind: 'reorg'; depth: number; dropMask: number }
  | { kind: 'resend'; pick: number };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('send' as const), from: fc.integer({ min: 0, max: 2 }), variant: fc.integer({ min: 0, max: 2 }) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('mine' as const), n: fc.integer({ min: 1, max: 3 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('reorg' as const), depth: fc.integer({ min: 1, max: 4 }), dropMask: fc.nat({ max: 15 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('resend' as const), pick: fc.nat() }) },
);

function checkAgainstReplay(node: DevnetNode): void {
  const bal = new Map(wallets.map((w) => [w.address, CREDIT]));
  const nonces = new Map<string, bigint>();
  let burned = 0n;
  let parent = ZERO_HASH;
  for (let h = 0; h <= node.height; h++) {
    const b = node.blockAt(h)!;
    expect(b.parent_hash).toBe(parent);
    expect(blockHash(b)).toBe(b.hash);
    parent = b.hash;
    for (const [i, t] of b.txs.entries()) {
      const { from, tx, total } = t.pool;
      const n = nonces.get(from) ?? 0n;
      expect(tx.nonce).toBe(n);
      nonces.set(from, n + 1n);
      const covered = (bal.get(from) ?? 0n) >= total;
      expect(t.status).toBe(covered ? 'success' : 'failed');
      expect(node.findIncluded(t.pool.hash)).toMatchObject({ index: i, block: { hash: b.hash } });
      if (covered) {
        bal.set(from, bal.get(from)! - total);
        for (const o of tx.outputs) bal.set(o.to, (bal.get(o.to) ?? 0n) + o.amount);
        burned += tx.fee;
      }
    }
  }
  for (const w of wallets) {
    expect(node.balanceOf(w.address)).toBe(bal.get(w.address));
    expect(node.nonceOf(w.address, 'latest')).toBe(nonces.get(w.address) ?? 0n);
  }
  const supply = wallets.reduce((s, w) => s + node.balanceOf(w.address), 0n);
  expect(supply).toBe(CREDIT * BigInt(wallets.length) - burned);
  for (const p of node.pending()) expect(node.findIncluded(p.hash)).toBeUndefined();
}

describe('devnet node model', () => {
  it('state always equals a replay of the canonical chain, through reorgs and drops', () => {
    fc.assert(
      fc.property(fc.array(opArb, { minLength: 1, maxLength: 30 }), (ops) => {
        const node = new DevnetNode({ network: 'test', maxBlockTxs: 3 });
        for (const w of wallets) node.faucet(w.address, CREDIT);
        const dropped: string[] = [];
        const rawByHash = new Map<string, string>();
        for (const op of ops) {
          if (op.kind === 'send') {
            const hex = raw(op.from, node.nonceOf(wallets[op.from]!.address, 'pending'), op.variant);
            rawByHash.set(node.sendRawTransaction(hex), hex);
          } else if (op.kind === 'mine') {
            node.mine(op.n);
          } else if (op.kind === 'reorg') {
            if (op.depth > node.height) continue;
            const inReorg = Array.from({ length: op.depth }, (_, i) => node.blockAt(node.height - i)!).flatMap((b) => b.txs.map((t) => t.pool.hash));
            const drop = inReorg.filter((_, i) => (op.dropMask >> i) & 1);
            const height = node.height;
            const r = node.reorg(op.depth, drop);
            expect(r.head.height).toBe(height + 1);
            expect(new Set([...r.returned, ...r.dropped])).toEqual(new Set(inReorg));
            for (const h of drop) expect(node.findIncluded(h)).toBeUndefined();
            dropped.push(...drop);
          } else if (dropped.length > 0) {
            const hash = dropped[op.pick % dropped.length]!;
            try {
              node.sendRawTransaction(rawByHash.get(hash)!);
            } catch (e) {
              expect((e as { data?: { reason?: string } }).data?.reason).toMatch(/^(nonce_too_low|nonce_pending|nonce_gap|already_known)$/);
            }
          }
          checkAgainstReplay(node);
        }
      }),
      { numRuns: 60 },
    );
  });
});
