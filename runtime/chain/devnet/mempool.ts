import type { PoolTx } from './block.ts';

/**
 * The devnet's pending transactions: arrival order for mining (transactions returned by a
 * reorg go first), with lookups by hash and by sender + nonce for admission and drop checks.
 */
export class Mempool {
  private queue: PoolTx[] = [];
  private readonly byHash = new Map<string, PoolTx>();
  private readonly bySender = new Map<string, Map<bigint, PoolTx>>();

  /** In mining order. */
  all(): readonly PoolTx[] {
    return this.queue;
  }

  get(hash: string): PoolTx | undefined {
    return this.byHash.get(hash);
  }

  /** The pending transaction that already uses this sender's nonce, if any. */
  withNonce(from: string, nonce: bigint): PoolTx | undefined {
    return this.bySender.get(from)?.get(nonce);
  }

  /** The first nonce from `accountNonce` up that no pending transaction of the sender uses. */
  nextNonce(from: string, accountNonce: bigint): bigint {
    const pending = this.bySender.get(from);
    let n = accountNonce;
    while (pending?.has(n)) n++;
    return n;
  }

  add(txs: readonly PoolTx[], where: 'front' | 'back'): void {
    for (const p of txs) {
      this.byHash.set(p.hash, p);
      let bySender = this.bySender.get(p.from);
      if (!bySender) this.bySender.set(p.from, (bySender = new Map<bigint, PoolTx>()));
      bySender.set(p.tx.nonce, p);
    }
    if (where === 'back') this.queue.push(...txs);
    else this.queue = [...txs, ...this.queue];
  }

  /** Forgets a transaction's lookups; the queue itself is replaced by `keep` after a mining pass. */
  forget(p: PoolTx): void {
    this.byHash.delete(p.hash);
    const bySender = this.bySender.get(p.from);
    bySender?.delete(p.tx.nonce);
    if (bySender?.size === 0) this.bySender.delete(p.from);
  }

  /** What a mining pass left waiting, in order (copied: the pass's list is not aliased). */
  keep(waiting: readonly PoolTx[]): void {
    this.queue = [...waiting];
  }
}
