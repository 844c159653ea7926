/**
 * Devnet node semantics (docs/devnet.md; DESIGN §3 "Devnet JSON-RPC", issue 4 item 2):
 * balances, nonces, refusals with clear reasons, failed receipts, mining, reorgs.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { RpcError } from '../rpc-errors.ts';
import { blockHash, txRoot, ZERO_HASH } from './block.ts';
import { seededWallet, signedTransfer, flipByte } from './fixtures.test-util.ts';
import { DevnetNode } from './node.ts';

const alice = seededWallet(1);
const bob = seededWallet(2);
const carol = seededWallet(3);
const aliceLive = seededWallet(1, 'live');

const nodes: DevnetNode[] = [];
function node(opts: Partial<ConstructorParameters<typeof DevnetNode>[0]> = {}): DevnetNode {
  const n = new DevnetNode({ network: 'test', ...opts });
  nodes.push(n);
  return n;
}
afterEach(() => {
  for (const n of nodes.splice(0)) n.close();
});

/** The RpcError a call throws, or fails the test. */
function refusal(fn: () => unknown): RpcError {
  try {
    fn();
  } catch (e) {
    if (e instanceof RpcError) return e;
    throw e;
  }
  throw new Error('expected an RpcError');
}

function checkChain(n: DevnetNode): void {
  let parent = ZERO_HASH;
  for (let h = 0; h <= n.height; h++) {
    const b = n.blockAt(h)!;
    expect(b.height).toBe(h);
    expect(b.parent_hash).toBe(parent);
    expect(b.tx_root).toBe(txRoot(b.txs.map((t) => t.pool.hash)));
    expect(blockHash(b)).toBe(b.hash);
    if (h > 0) expect(b.timestamp).toBeGreaterThanOrEqual(n.blockAt(h - 1)!.timestamp);
    parent = b.hash;
  }
}

describe('devnet node: accounts and transfers', () => {
  it('starts at a genesis block with zero parent and empty state', () => {
    const n = node();
    expect(n.height).toBe(0);
    expect(n.head.parent_hash).toBe(ZERO_HASH);
    expect(n.balanceOf(alice.address)).toBe(0n);
    expect(n.nonceOf(alice.address)).toBe(0n);
    checkChain(n);
  });

  it('moves outputs, burns the fee, counts the nonce and writes a success receipt', () => {
    const n = node();
    n.faucet(alice.address, 1_000n);
    const hash = n.sendRawTransaction(signedTransfer(alice, { nonce: 0n, outputs: [{ to: bob.address, amount: 300n }, { to: carol.address, amount: 200n }], fee: 7n }));
    expect(n.pending().map((p) => p.hash)).toEqual([hash]);
    expect(n.nonceOf(alice.address, 'pending')).toBe(1n);
    expect(n.nonceOf(alice.address, 'latest')).toBe(0n);
    expect(n.findIncluded(hash)).toBeUndefined();
    const [b] = n.mine(1);
    expect(b!.txs.map((t) => [t.pool.hash, t.status])).toEqual([[hash, 'success']]);
    expect(n.findIncluded(hash)).toMatchObject({ index: 0, block: { height: 1 } });
    expect([n.balanceOf(alice.address), n.balanceOf(bob.address), n.balanceOf(carol.address)]).toEqual([493n, 300n, 200n]);
    expect(n.nonceOf(alice.address, 'latest')).toBe(1n);
    expect(n.pending()).toHaveLength(0);
    checkChain(n);
  });

  it('includes a transaction the sender cannot cover with a failed receipt: only the nonce moves', () => {
    const n = node();
    n.faucet(alice.address, 100n);
    const short = n.sendRawTransaction(signedTransfer(alice, { nonce: 0n, outputs: [{ to: bob.address, amount: 100n }], fee: 1n }));
    const fine = n.sendRawTransaction(signedTransfer(alice, { nonce: 1n, outputs: [{ to: bob.address, amount: 60n }] }));
    const [b] = n.mine(1);
    expect(b!.txs.map((t) => [t.pool.hash, t.status, t.error])).toEqual([
      [short, 'failed', 'insufficient_balance'],
      [fine, 'success', null],
    ]);
    expect(n.balanceOf(alice.address)).toBe(40n);
    expect(n.balanceOf(bob.address)).toBe(60n);
    expect(n.nonceOf(alice.address, 'latest')).toBe(2n);
  });

  it('keeps each network apart: addresses of the other hrp are refused', () => {
    const n = node();
    expect(refusal(() => n.balanceOf(aliceLive.address)).data?.reason).toBe('wrong_hrp');
    expect(refusal(() => n.faucet('tanm1nope', 5n)).data?.reason).toBe('bad_format');
    expect(refusal(() => n.faucet(alice.address, 0n)).data?.reason).toBe('bad_amount');
    const live = node({ network: 'live' });
    expect(live.chainId).toBe(1);
    live.faucet(aliceLive.address, 5n);
    expect(live.balanceOf(aliceLive.address)).toBe(5n);
  });
});

describe('devnet node: refusals with clear errors', () => {
  it('refuses a replayed nonce: the same bytes, or new bytes with a used nonce', () => {
    const n = node();
    n.faucet(alice.address, 1_000n);
    const raw = signedTransfer(alice, { nonce: 0n, outputs: [{ to: bob.address, amount: 10n }] });
    n.sendRawTransaction(raw);
    const known = refusal(() => n.sendRawTransaction(raw));
    expect([known.code, known.data?.reason]).toEqual([-32003, 'already_known']);
    const sameNonce = refusal(() => n.sendRawTransaction(signedTransfer(alice, { nonce: 0n, outputs: [{ to: bob.address, amount: 11n }] })));
    expect([sameNonce.code, sameNonce.data?.reason]).toEqual([-32002, 'nonce_pending']);
    n.mine(1);
    const replay = refusal(() => n.sendRawTransaction(raw));
    expect([replay.code, replay.data?.reason]).toEqual([-32002, 'nonce_too_low']);
    expect(replay.message).toMatch(/already used \(replayed transaction\); the next nonce is 1/);
    const gap = refusal(() => n.sendRawTransaction(signedTransfer(alice, { nonce: 5n, outputs: [{ to: bob.address, amount: 1n }] })));
    expect([gap.code, gap.data?.reason, gap.data?.next_nonce]).toEqual([-32002, 'nonce_gap', '1']);
    expect(n.balanceOf(bob.address)).toBe(10n);
  });

  it('refuses tampered, wrong-chain, wrong-hrp and malformed transactions by their codec reason', () => {
    const n = node();
    const good = signedTransfer(alice, { nonce: 0n, outputs: [{ to: bob.address, amount: 100n }] });
    const cases: [string, string][] = [
      [flipByte(good, good.length / 2 - 10), 'bad_signature'], // a signature byte
      [flipByte(good, 9 + 4 + 2 + 1952 + 8 + 2 + 1 + 63 + 7), 'bad_signature'], // the amount's last byte: 100 -> 101
      [signedTransfer(alice, { nonce: 0n, outputs: [{ to: bob.address, amount: 1n }], chainId: 1 }), 'wrong_chain_id'],
      [signedTransfer(alice, { nonce: 0n, outputs: [{ to: aliceLive.address, amount: 1n }] }), 'wrong_hrp'],
      [good.slice(0, -2), 'malformed'],
      ['zz', 'malformed'],
    ];
    for (const [raw, reason] of cases) {
      const e = refusal(() => n.sendRawTransaction(raw));
      expect([e.code, e.data?.reason]).toEqual([-32001, reason]);
      expect(e.message).toContain(reason);
    }
    expect(n.pending()).toHaveLength(0);
    expect(n.sendRawTransaction(good)).toMatch(/^[0-9a-f]{64}$/);
  });

  it('refuses a fee below the configured minimum', () => {
    const n = node({ minFee: 10n });
    const e = refusal(() => n.sendRawTransaction(signedTransfer(alice, { nonce: 0n, outputs: [{ to: bob.address, amount: 1n }], fee: 9n })));
    expect([e.code, e.data?.reason]).toEqual([-32001, 'fee_too_low']);
  });
});

describe('devnet node: mining', () => {
  it('mines empty blocks on request and chains parent hashes', () => {
    const n = node();
    const blocks = n.mine(5);
    expect(blocks.map((b) => b.height)).toEqual([1, 2, 3, 4, 5]);
    expect(new Set(blocks.map((b) => b.hash)).size).toBe(5);
    checkChain(n);
  });

  it('caps a block at maxBlockTxs and keeps the rest for the next block', () => {
    const n = node({ maxBlockTxs: 2 });
    n.faucet(alice.address, 100n);
    for (let i = 0; i < 3; i++) n.sendRawTransaction(signedTransfer(alice, { nonce: BigInt(i), outputs: [{ to: bob.address, amount: 1n }] }));
    expect(n.mine(1)[0]!.txs).toHaveLength(2);
    expect(n.pending()).toHaveLength(1);
    expect(n.mine(1)[0]!.txs).toHaveLength(1);
    expect(n.balanceOf(bob.address)).toBe(3n);
  });

  it('automines every blockMs and stops at 0', async () => {
    const n = node({ blockMs: 20 });
    await new Promise((r) => setTimeout(r, 150));
    n.setAutomine(0);
    const h = n.height;
    expect(h).toBeGreaterThanOrEqual(2);
    await new Promise((r) => setTimeout(r, 60));
    expect(n.height).toBe(h);
    expect(n.automineMs).toBe(0);
  });

  it('uses a non-decreasing timestamp even if the clock goes back', () => {
    let t = 1_000;
    const n = node({ now: () => t });
    t = 500;
    n.mine(1);
    expect(n.head.timestamp).toBe(1_000);
  });
});

describe('devnet node: dev_reorg', () => {
  it('replaces the last blocks with depth+1 new ones and re-includes their transactions', () => {
    const n = node();
    n.faucet(alice.address, 100n);
    n.mine(2);
    const hash = n.sendRawTransaction(signedTransfer(alice, { nonce: 0n, outputs: [{ to: bob.address, amount: 40n }] }));
    n.mine(3); // tx in block 3, head 5
    const before = [3, 4, 5].map((h) => n.blockAt(h)!.hash);
    const r = n.reorg(3);
    expect(r.fork_height).toBe(2);
    expect(r.old_head).toEqual({ height: 5, hash: before[2] });
    expect(r.removed.map((b) => b.hash)).toEqual(before);
    expect(r.returned).toEqual([hash]);
    expect(r.dropped).toEqual([]);
    expect(r.added.map((b) => b.height)).toEqual([3, 4, 5, 6]);
    expect(r.head.height).toBe(6);
    for (const [i, h] of before.entries()) expect(n.blockAt(3 + i)!.hash).not.toBe(h);
    expect(n.blockAt(3)!.parent_hash).toBe(n.blockAt(2)!.hash);
    expect(n.findIncluded(hash)?.block.hash).toBe(n.blockAt(3)!.hash);
    expect(n.balanceOf(bob.address)).toBe(40n);
    checkChain(n);
  });

  it('drops the listed transactions for good: state undone, no receipt, nonce free again, re-sendable', () => {
    const n = node();
    n.faucet(alice.address, 100n);
    const raw = signedTransfer(alice, { nonce: 0n, outputs: [{ to: bob.address, amount: 40n }] });
    const keepRaw = signedTransfer(carol, { nonce: 0n, outputs: [{ to: bob.address, amount: 1n }] });
    n.faucet(carol.address, 1n);
    const hash = n.sendRawTransaction(raw);
    const keep = n.sendRawTransaction(keepRaw);
    n.mine(2);
    const r = n.reorg(2, [hash]);
    expect(r.dropped).toEqual([hash]);
    expect(r.returned).toEqual([keep]);
    expect(n.findIncluded(hash)).toBeUndefined();
    expect(n.findPending(hash)).toBeUndefined();
    expect(n.findIncluded(keep)?.block.height).toBe(1);
    expect([n.balanceOf(alice.address), n.balanceOf(bob.address), n.nonceOf(alice.address, 'latest')]).toEqual([100n, 1n, 0n]);
    expect(n.height).toBe(3);
    // the very same bytes are valid again (nonce 0 is free) and get re-included
    expect(n.sendRawTransaction(raw)).toBe(hash);
    n.mine(1);
    expect(n.findIncluded(hash)?.block.height).toBe(4);
    expect(n.balanceOf(bob.address)).toBe(41n);
    checkChain(n);
  });

  it('undoes failed receipts too and may change an outcome when a funding transfer is dropped', () => {
    const n = node();
    n.faucet(alice.address, 50n);
    const fund = n.sendRawTransaction(signedTransfer(alice, { nonce: 0n, outputs: [{ to: bob.address, amount: 50n }] }));
    const spend = n.sendRawTransaction(signedTransfer(bob, { nonce: 0n, outputs: [{ to: carol.address, amount: 30n }] }));
    n.mine(1);
    expect(n.findIncluded(spend)?.tx.status).toBe('success');
    n.reorg(1, [fund]);
    expect(n.findIncluded(spend)?.tx.status).toBe('failed');
    expect([n.balanceOf(alice.address), n.balanceOf(bob.address), n.balanceOf(carol.address)]).toEqual([50n, 0n, 0n]);
    expect(n.nonceOf(bob.address, 'latest')).toBe(1n);
  });

  it('keeps a sender\'s later transactions waiting behind a dropped nonce until it is filled', () => {
    const n = node();
    n.faucet(alice.address, 100n);
    const first = n.sendRawTransaction(signedTransfer(alice, { nonce: 0n, outputs: [{ to: bob.address, amount: 1n }] }));
    const second = n.sendRawTransaction(signedTransfer(alice, { nonce: 1n, outputs: [{ to: bob.address, amount: 2n }] }));
    n.mine(1);
    n.reorg(1, [first]);
    expect(n.findIncluded(second)).toBeUndefined();
    expect(n.pending().map((p) => p.hash)).toEqual([second]);
    expect(n.nonceOf(alice.address, 'pending')).toBe(0n);
    const refill = n.sendRawTransaction(signedTransfer(alice, { nonce: 0n, outputs: [{ to: carol.address, amount: 5n }] }));
    n.mine(1);
    expect(n.findIncluded(refill)?.index).toBe(0);
    expect(n.findIncluded(second)?.index).toBe(1);
    expect(n.balanceOf(bob.address)).toBe(2n);
  });

  it('refuses reorgs it cannot honour', () => {
    const n = node();
    n.mine(2);
    expect(refusal(() => n.reorg(3)).data?.reason).toBe('reorg_too_deep');
    expect(refusal(() => n.reorg(0)).data?.reason).toBe('bad_depth');
    expect(refusal(() => n.reorg(1, ['ab'.repeat(32)])).data?.reason).toBe('drop_not_in_reorg');
    expect(n.height).toBe(2);
  });

  it('keeps faucet credits through a reorg (they are not in blocks)', () => {
    const n = node();
    n.mine(1);
    n.faucet(alice.address, 9n);
    n.reorg(1);
    expect(n.balanceOf(alice.address)).toBe(9n);
  });
});
