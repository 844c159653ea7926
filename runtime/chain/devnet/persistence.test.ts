/**
 * The devnet keeps its chain (DESIGN §3 "The devnet keeps its chain"; docs/devnet.md
 * "Persistence"): a node on a data directory, closed and reopened after every step, shows
 * exactly what a twin that never restarted shows: blocks and hashes, genesis, balances,
 * nonces, mempool and receipts, after transfers, failed receipts, reorgs and drops.
 */
import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { decodeSignedTx, txHash } from '../../../machines/chain/index.ts';
import { CHAIN_LOG_FILE, ChainLogError } from './chain-log.ts';
import { seededWallet, signedTransfer } from './fixtures.test-util.ts';
import { DevnetLockError } from './lock.ts';
import { DevnetNode } from './node.ts';

const alice = seededWallet(1);
const bob = seededWallet(2);
const carol = seededWallet(3);
const people = [alice, bob, carol];

const dirs: string[] = [];
const open: DevnetNode[] = [];
afterEach(() => {
  for (const n of open.splice(0)) n.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const d = mkdtempSync(path.join(tmpdir(), 'anm-devnet-'));
  dirs.push(d);
  return d;
}

/** A fixed clock, so the twin and the restarted node stamp blocks alike. */
function node(dataDir?: string, clock = 1_700_000_000_000): DevnetNode {
  const n = new DevnetNode({ network: 'test', now: () => clock, ...(dataDir && { dataDir }) });
  open.push(n);
  return n;
}

function reopen(n: DevnetNode, dataDir: string, clock?: number): DevnetNode {
  n.close();
  open.splice(open.indexOf(n), 1);
  return node(dataDir, clock);
}

/** Everything a client can observe. */
function observe(n: DevnetNode, txHashes: readonly string[]): unknown {
  const blocks = Array.from({ length: n.height + 1 }, (_, h) => {
    const b = n.blockAt(h)!;
    return { hash: b.hash, parent: b.parent_hash, timestamp: b.timestamp, serial: b.serial, txs: b.txs.map((t) => [t.pool.hash, t.status, t.error]) };
  });
  return {
    height: n.height,
    blocks,
    pending: n.pending().map((p) => p.hash),
    accounts: people.map((w) => [n.balanceOf(w.address), n.nonceOf(w.address, 'latest'), n.nonceOf(w.address, 'pending')]),
    receipts: txHashes.map((h) => {
      const f = n.findIncluded(h);
      return f ? [f.block.height, f.index, f.tx.status] : n.findPending(h) ? 'pending' : null;
    }),
  };
}

describe('devnet persistence: a restart restores the exact chain', () => {
  it('matches a never-restarted twin after transfers, a failed receipt, pending transactions, a reorg with drop and more blocks', () => {
    const dir = tempDir();
    const twin = node();
    let disk = node(dir);
    const fund = signedTransfer(alice, { nonce: 0n, outputs: [{ to: bob.address, amount: 400n }], fee: 3n });
    const pay = signedTransfer(bob, { nonce: 0n, outputs: [{ to: carol.address, amount: 150n }] });
    const short = signedTransfer(carol, { nonce: 0n, outputs: [{ to: alice.address, amount: 10_000n }] });
    const later = signedTransfer(alice, { nonce: 1n, outputs: [{ to: carol.address, amount: 5n }] });
    const hashes = [fund, pay, short, later].map((raw) => txHash(decodeSignedTx(raw)));
    const both = (step: (n: DevnetNode) => void): void => {
      step(twin);
      step(disk);
      disk = reopen(disk, dir);
      expect(observe(disk, hashes)).toEqual(observe(twin, hashes));
    };
    both(() => undefined); // genesis alone
    both((n) => n.faucet(alice.address, 1_000n));
    both((n) => [fund, pay, short].forEach((raw) => n.sendRawTransaction(raw)));
    both((n) => n.mine(2));
    both((n) => n.sendRawTransaction(later));
    // Alice's funding transfer is dropped: Bob's payment now fails, Alice's nonce 1 waits.
    both((n) => n.reorg(2, [hashes[0]!]));
    both((n) => n.mine(1));
    const after = observe(disk, hashes) as { pending: string[]; receipts: unknown[]; blocks: unknown[] };
    expect(after.pending.length).toBeGreaterThan(0); // the waiting transaction survived restarts in the mempool
    expect(after.receipts[0]).toBeNull(); // dropped for good
    expect(after.receipts[1]).toEqual([expect.any(Number), 0, 'failed']);
    expect(disk.height).toBe(4); // 2 mined, reorg(2) makes 3, 1 more
    // Re-sending the dropped transaction after a restart behaves as on the twin.
    both((n) => n.sendRawTransaction(fund));
    both((n) => n.mine(1));
    expect(disk.nonceOf(alice.address, 'latest')).toBe(2n);
    expect(disk.pending()).toHaveLength(0);
  });

  it('mines on from the restored head with a fresh serial: no block hash repeats', () => {
    const dir = tempDir();
    let n = node(dir);
    const genesis = n.head;
    const first = n.mine(3).map((b) => b.hash);
    n.reorg(2);
    const head = n.head.hash;
    n = reopen(n, dir, genesis.timestamp + 60_000); // the clock moved on: restored blocks keep their own timestamps
    expect([n.blockAt(0)!.hash, n.blockAt(0)!.timestamp, n.head.hash]).toEqual([genesis.hash, genesis.timestamp, head]);
    const next = n.mine(1)[0]!;
    expect(next.timestamp).toBe(genesis.timestamp + 60_000);
    expect(next.parent_hash).toBe(n.blockAt(next.height - 1)!.hash);
    expect(first).not.toContain(next.hash);
    expect(next.serial).toBe(7); // genesis 0, three blocks, three re-mined by the reorg
  });
});

describe('devnet persistence: the log on disk', () => {
  it('drops a record cut short by a crash and keeps everything before it', () => {
    const dir = tempDir();
    const n = node(dir);
    n.faucet(alice.address, 77n);
    n.mine(2);
    const head = n.head.hash;
    n.close();
    open.length = 0;
    const file = path.join(dir, 'chain.jsonl');
    appendFileSync(file, '{"op":"block","height":3,"timest');
    const back = node(dir);
    expect([back.head.hash, back.balanceOf(alice.address)]).toEqual([head, 77n]);
    expect(readFileSync(file, 'utf8').endsWith('}\n')).toBe(true);
  });

  it('refuses a log that does not replay to the recorded hashes, naming the record', () => {
    const dir = tempDir();
    const n = node(dir);
    n.mine(2);
    n.close();
    open.length = 0;
    const file = path.join(dir, CHAIN_LOG_FILE);
    const lines = readFileSync(file, 'utf8').split('\n');
    lines[2] = lines[2]!.replace(/"timestamp":\d+/, '"timestamp":1');
    writeFileSync(file, lines.join('\n'));
    expect(() => node(dir)).toThrow(ChainLogError);
    expect(() => node(dir)).toThrow(/record 3: block 2 hashes/);
    writeFileSync(file, 'not json\n');
    expect(() => node(dir)).toThrow(/line 1 is not a chain record/);
  });

  it('refuses a log of the other network', () => {
    const dir = tempDir();
    node(dir).close();
    open.length = 0;
    expect(() => new DevnetNode({ network: 'live', dataDir: dir })).toThrow(/chain id 1001, this network is 1/);
  });

  it('lets one node at a time write a directory; a lock left by a dead process is taken over', () => {
    const dir = tempDir();
    const n = node(dir);
    expect(() => node(dir)).toThrow(DevnetLockError);
    n.close();
    open.length = 0;
    writeFileSync(path.join(dir, 'LOCK'), '2147483646\n'); // no such process
    const again = node(dir);
    expect(again.height).toBe(0);
  });
});
