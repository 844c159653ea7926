/**
 * The devnet's chain in memory: the canonical block list, the accounts (ledger.ts), the
 * mempool (mempool.ts) and the index of included transactions, with the two ways the chain
 * moves: a block mined on top, and the last blocks unwound by a reorg. It checks nothing a
 * caller sends: node.ts admits transactions and turns refusals into RPC errors.
 */
import type { VerifyTxResult } from '../../../machines/chain/index.ts';
import { ZERO_HASH, makeBlock, type Block, type BlockTx, type PoolTx } from './block.ts';
import { Ledger } from './ledger.ts';
import { Mempool } from './mempool.ts';

interface TxLocation {
  block: Block;
  index: number;
}

export class DevnetChain {
  readonly ledger = new Ledger();
  readonly mempool = new Mempool();
  /** The serial the next block is sealed with (block hashes differ across reorgs through it). */
  serial = 0;
  private readonly blocks: Block[] = [];
  private readonly included = new Map<string, TxLocation>();

  constructor(
    private readonly chainId: number,
    private readonly maxBlockTxs: number,
  ) {}

  get height(): number {
    return this.blocks.length - 1;
  }

  get head(): Block {
    return this.blocks[this.blocks.length - 1]!;
  }

  blockAt(height: number): Block | undefined {
    return this.blocks[height];
  }

  /** The blocks above `height`, lowest first. */
  above(height: number): Block[] {
    return this.blocks.slice(height + 1);
  }

  findIncluded(hash: string): { block: Block; index: number; tx: BlockTx } | undefined {
    const loc = this.included.get(hash);
    const tx = loc?.block.txs[loc.index];
    return loc && tx ? { ...loc, tx } : undefined;
  }

  /** The next nonce to sign with: the account's, past the sender's gap-free pending ones. */
  nextNonce(address: string): bigint {
    return this.mempool.nextNonce(address, this.ledger.nonce(address));
  }

  genesisBlock(timestamp: number): Block {
    return makeBlock({ chain_id: this.chainId, height: 0, parent_hash: ZERO_HASH, timestamp, serial: 0 }, []);
  }

  /** Starts the chain with its genesis block. */
  begin(genesis: Block): void {
    this.blocks.push(genesis);
    this.serial = 1;
  }

  /** Queues a verified transaction at the back of the mempool. */
  admit(v: VerifyTxResult & { ok: true }): void {
    const total = v.tx.outputs.reduce((s, o) => s + o.amount, v.tx.fee);
    this.mempool.add([{ hash: v.hash, from: v.from, tx: v.tx, total }], 'back');
  }

  /**
   * Takes executable transactions in mempool order: nonce = the sender's nonce. Lower
   * nonces are stale (discarded), higher ones wait; passes repeat while a pass unblocked
   * a waiting transaction of the same block.
   */
  mineOne(now: number): { block: Block; discarded: string[] } {
    const parent = this.head;
    const txs: BlockTx[] = [];
    const discarded: string[] = [];
    let queue = this.mempool.all();
    for (;;) {
      const waiting: PoolTx[] = [];
      let progressed = false;
      for (const p of queue) {
        if (txs.length >= this.maxBlockTxs) {
          waiting.push(p);
          continue;
        }
        const nonce = this.ledger.nonce(p.from);
        if (p.tx.nonce < nonce) {
          this.mempool.forget(p);
          discarded.push(p.hash);
          continue;
        }
        if (p.tx.nonce > nonce) {
          waiting.push(p);
          continue;
        }
        this.mempool.forget(p);
        txs.push(this.ledger.execute(p));
        progressed = true;
      }
      queue = waiting;
      if (!progressed || waiting.length === 0 || txs.length >= this.maxBlockTxs) break;
    }
    this.mempool.keep(queue);
    return { block: this.seal(Math.max(now, parent.timestamp), this.serial++, txs), discarded };
  }

  /** Appends a block of already executed transactions on top of the head. */
  seal(timestamp: number, serial: number, txs: BlockTx[]): Block {
    const parent = this.head;
    const block = makeBlock({ chain_id: this.chainId, height: parent.height + 1, parent_hash: parent.hash, timestamp, serial }, txs);
    this.blocks.push(block);
    block.txs.forEach((t, index) => this.included.set(t.pool.hash, { block, index }));
    return block;
  }

  /** The first half of a reorg: undoes the last `depth` blocks and returns their transactions (but `drop`) to the front of the mempool. */
  unwind(depth: number, drop: readonly string[]): { removed: Block[]; back: PoolTx[] } {
    const removed = this.blocks.slice(this.height - depth + 1);
    for (const b of [...removed].reverse()) this.revertBlock(b);
    this.blocks.length -= depth;
    const dropSet = new Set(drop);
    const back = removed.flatMap((b) => b.txs.map((t) => t.pool)).filter((p) => !dropSet.has(p.hash));
    this.mempool.add(back, 'front');
    return { removed, back };
  }

  /** Undoes a block's transactions, last first. */
  private revertBlock(b: Block): void {
    for (const t of [...b.txs].reverse()) {
      this.ledger.revert(t);
      this.included.delete(t.pool.hash);
    }
  }
}
