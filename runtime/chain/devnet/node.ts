/**
 * The ANM development node: one chain per network. It keeps accounts (balance, nonce), a
 * mempool, the canonical block list and receipts, and mines on a timer or on request. With
 * a data directory every change is also appended to its chain log (chain-log.ts) and a new
 * node replays that log, so a restart resumes the same chain. Every transaction goes through the runtime's verifyTransaction (codec, chain id,
 * hrp, signature); nonces and balances are its own state. Semantics are in docs/devnet.md
 * and docs/adr/0007-devnet.md (fee burned, faucet outside blocks, reorg rules).
 */
import { NETWORKS, decodeAddress, verifyTx, type NetworkName, type VerifyTxResult } from '../../../machines/chain/index.ts';
import { verifyTransaction } from '../codec/verify.ts';
import { RpcError } from '../rpc-errors.ts';
import { U64_MAX, type HeadRef, type NonceTag, type ReorgResult } from '../rpc-types.ts';
import { ZERO_HASH, makeBlock, type Block, type BlockTx, type PoolTx } from './block.ts';
import { ChainLog, ChainLogError, type ChainRecord } from './chain-log.ts';
import { Ledger } from './ledger.ts';
import { Mempool } from './mempool.ts';

export interface DevnetOptions {
  network: NetworkName;
  /** Automine interval; 0 mines only on request (dev_mine, dev_reorg). */
  blockMs?: number;
  /** Most transactions one block takes; the rest wait for the next block. */
  maxBlockTxs?: number;
  /** Smallest fee accepted (nANM). The devnet default is 0: fees are allowed, not required. */
  minFee?: bigint;
  /** Clock for block timestamps (tests). */
  now?: () => number;
  /** Directory of this network's chain log; without one the chain lives in memory only. */
  dataDir?: string;
}

export const DEFAULT_MAX_BLOCK_TXS = 5_000;

interface TxLocation {
  block: Block;
  index: number;
}

export class DevnetNode {
  readonly network: NetworkName;
  readonly chainId: number;
  readonly hrp: string;
  readonly maxBlockTxs: number;
  readonly minFee: bigint;
  private readonly now: () => number;
  private readonly blocks: Block[] = [];
  private readonly ledger = new Ledger();
  private readonly mempool = new Mempool();
  private readonly included = new Map<string, TxLocation>();
  private serial = 0;
  private blockMs = 0;
  private timer: NodeJS.Timeout | undefined;
  private readonly log: ChainLog | undefined;

  constructor(opts: DevnetOptions) {
    this.network = opts.network;
    this.chainId = NETWORKS[opts.network].chainId;
    this.hrp = NETWORKS[opts.network].hrp;
    this.maxBlockTxs = opts.maxBlockTxs ?? DEFAULT_MAX_BLOCK_TXS;
    this.minFee = opts.minFee ?? 0n;
    this.now = opts.now ?? Date.now;
    if (opts.dataDir) {
      this.log = ChainLog.open(opts.dataDir, () => {
        const g = this.genesis(this.now());
        return { op: 'genesis', chain_id: this.chainId, timestamp: g.timestamp, hash: g.hash };
      });
      try {
        this.replay(this.log.records);
      } catch (e) {
        this.log.close();
        throw e;
      }
    } else {
      this.blocks.push(this.genesis(this.now()));
      this.serial = 1;
    }
    this.setAutomine(opts.blockMs ?? 0);
  }

  // ---- reads -------------------------------------------------------------------------

  get height(): number {
    return this.blocks.length - 1;
  }

  get head(): Block {
    return this.blocks[this.blocks.length - 1]!;
  }

  get automineMs(): number {
    return this.blockMs;
  }

  blockAt(height: number): Block | undefined {
    return this.blocks[height];
  }

  balanceOf(address: string): bigint {
    return this.ledger.balance(this.checkAddress(address));
  }

  /** `latest`: transactions included so far; `pending`: the next nonce to sign with (counts the sender's gap-free pending ones). */
  nonceOf(address: string, tag: NonceTag = 'pending'): bigint {
    const a = this.checkAddress(address);
    return tag === 'latest' ? this.accountNonce(a) : this.nextNonce(a);
  }

  pending(): readonly PoolTx[] {
    return this.mempool.all();
  }

  findIncluded(hash: string): { block: Block; index: number; tx: BlockTx } | undefined {
    const loc = this.included.get(hash);
    const tx = loc?.block.txs[loc.index];
    return loc && tx ? { ...loc, tx } : undefined;
  }

  findPending(hash: string): PoolTx | undefined {
    return this.mempool.get(hash);
  }

  // ---- writes ------------------------------------------------------------------------

  /** Verifies and queues a signed transaction; returns its hash or throws an RpcError. */
  sendRawTransaction(hex: string): string {
    const v = verifyTransaction(hex, { chainId: this.chainId, hrp: this.hrp });
    if (!v.ok) throw RpcError.of('tx_rejected', v.error.code, `transaction rejected: ${v.error.code}: ${v.error.message}`);
    const { tx, hash, from } = v;
    if (this.mempool.get(hash)) throw RpcError.of('already_known', 'already_known', `transaction ${hash} is already in the mempool`, { tx_hash: hash });
    const accountNonce = this.accountNonce(from);
    if (tx.nonce < accountNonce) {
      throw RpcError.of('nonce_rejected', 'nonce_too_low', `nonce ${tx.nonce} of ${from} is already used (replayed transaction); the next nonce is ${this.nextNonce(from)}`, {
        nonce: tx.nonce.toString(),
        next_nonce: this.nextNonce(from).toString(),
      });
    }
    const taken = this.mempool.withNonce(from, tx.nonce);
    if (taken) {
      throw RpcError.of('nonce_rejected', 'nonce_pending', `nonce ${tx.nonce} of ${from} is already used by pending transaction ${taken.hash}`, {
        nonce: tx.nonce.toString(),
        pending_tx_hash: taken.hash,
      });
    }
    const next = this.nextNonce(from);
    if (tx.nonce > next) {
      throw RpcError.of('nonce_rejected', 'nonce_gap', `nonce ${tx.nonce} of ${from} leaves a gap; the next nonce is ${next}`, {
        nonce: tx.nonce.toString(),
        next_nonce: next.toString(),
      });
    }
    if (tx.fee < this.minFee) throw RpcError.of('tx_rejected', 'fee_too_low', `fee ${tx.fee} nANM is below this node's minimum of ${this.minFee}`);
    this.admit(v);
    this.log?.append({ op: 'tx', raw: hex }, false);
    return hash;
  }

  /** Mines `n` blocks now (empty ones too: confirmations advance without traffic). */
  mine(n = 1): Block[] {
    const out: Block[] = [];
    for (let i = 0; i < n; i++) out.push(this.mineOne());
    // One fsync for the batch: dev_mine(10000) must not wait for ten thousand disk flushes.
    this.log?.sync();
    return out;
  }

  /**
   * Replaces the last `depth` blocks: their state effects are undone, their transactions go
   * back to the front of the mempool (except `drop`, discarded for good), then `depth + 1`
   * blocks are mined, so the new chain is one block longer and shares nothing above the fork.
   */
  reorg(depth: number, drop: readonly string[] = []): ReorgResult {
    if (!Number.isInteger(depth) || depth < 1) throw RpcError.of('invalid_params', 'bad_depth', 'reorg depth must be an integer >= 1');
    if (depth > this.height) throw RpcError.of('dev_refused', 'reorg_too_deep', `reorg depth ${depth} exceeds the chain height ${this.height} (the genesis block stays)`);
    const forkHeight = this.height - depth;
    const oldHead = ref(this.head);
    const removedHashes = new Set(this.blocks.slice(forkHeight + 1).flatMap((b) => b.txs.map((t) => t.pool.hash)));
    for (const h of drop) {
      if (!removedHashes.has(h)) throw RpcError.of('invalid_params', 'drop_not_in_reorg', `transaction ${h} is not in the last ${depth} block(s)`, { tx_hash: h });
    }
    const { removed, back } = this.unwind(depth, drop);
    this.log?.append({ op: 'reorg', depth, drop: [...drop] }, false);
    const added = this.mine(depth + 1);
    return {
      fork_height: forkHeight,
      old_head: oldHead,
      removed: removed.map(ref),
      dropped: [...new Set(drop)],
      returned: back.map((p) => p.hash),
      added: added.map(ref),
      head: ref(this.head),
    };
  }

  /** Dev credit outside any block (minted; survives reorgs). Returns the new balance. */
  faucet(address: string, amount: bigint): bigint {
    const a = this.checkAddress(address);
    if (amount <= 0n) throw RpcError.of('invalid_params', 'bad_amount', 'faucet amount must be > 0 nANM');
    if (this.ledger.balance(a) + amount > U64_MAX) throw RpcError.of('dev_refused', 'balance_overflow', 'balance would exceed 2^64-1 nANM');
    const balance = this.ledger.credit(a, amount);
    this.log?.append({ op: 'faucet', address: a, amount: amount.toString() }, true);
    return balance;
  }

  setAutomine(ms: number): void {
    if (!Number.isInteger(ms) || ms < 0) throw RpcError.of('invalid_params', 'bad_block_ms', 'block interval must be an integer >= 0 ms');
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.blockMs = ms;
    if (ms > 0) {
      this.timer = setInterval(() => {
        this.mineOne();
        this.log?.sync();
      }, ms);
      this.timer.unref();
    }
  }

  close(): void {
    this.setAutomine(0);
    this.log?.close();
  }

  // ---- internals ---------------------------------------------------------------------

  private checkAddress(address: string): string {
    try {
      return decodeAddress(address, this.hrp).address;
    } catch (e) {
      const reason = (e as { code?: string }).code ?? 'bad_address';
      throw RpcError.of('invalid_params', reason, `invalid ${this.network} address: ${(e as Error).message}`);
    }
  }

  private accountNonce(address: string): bigint {
    return this.ledger.nonce(address);
  }

  private nextNonce(address: string): bigint {
    return this.mempool.nextNonce(address, this.accountNonce(address));
  }

  /**
   * Takes executable transactions in mempool order: nonce = the sender's nonce. Lower
   * nonces are stale (discarded), higher ones wait; passes repeat while a pass unblocked
   * a waiting transaction of the same block.
   */
  private mineOne(): Block {
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
        const nonce = this.accountNonce(p.from);
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
    const block = this.seal(Math.max(this.now(), parent.timestamp), this.serial++, txs);
    const { height, timestamp, serial, hash } = block;
    this.log?.append({ op: 'block', height, timestamp, serial, hash, txs: txs.map((t) => t.pool.hash), discarded }, false);
    return block;
  }

  private genesis(timestamp: number): Block {
    return makeBlock({ chain_id: this.chainId, height: 0, parent_hash: ZERO_HASH, timestamp, serial: 0 }, []);
  }

  /** Appends a block of already executed transactions on top of the head. */
  private seal(timestamp: number, serial: number, txs: BlockTx[]): Block {
    const parent = this.head;
    const block = makeBlock({ chain_id: this.chainId, height: parent.height + 1, parent_hash: parent.hash, timestamp, serial }, txs);
    this.blocks.push(block);
    block.txs.forEach((t, index) => this.included.set(t.pool.hash, { block, index }));
    return block;
  }

  private admit(v: VerifyTxResult & { ok: true }): void {
    const total = v.tx.outputs.reduce((s, o) => s + o.amount, v.tx.fee);
    this.mempool.add([{ hash: v.hash, from: v.from, tx: v.tx, total }], 'back');
  }

  /** The first half of a reorg: undoes the last `depth` blocks and returns their transactions (but `drop`) to the front of the mempool. */
  private unwind(depth: number, drop: readonly string[]): { removed: Block[]; back: PoolTx[] } {
    const removed = this.blocks.slice(this.height - depth + 1);
    for (const b of [...removed].reverse()) this.revertBlock(b);
    this.blocks.length -= depth;
    const dropSet = new Set(drop);
    const back = removed.flatMap((b) => b.txs.map((t) => t.pool)).filter((p) => !dropSet.has(p.hash));
    this.mempool.add(back, 'front');
    return { removed, back };
  }

  /** Rebuilds the chain from its log; every block must hash as recorded, or the log is not this node's. */
  private replay(records: readonly ChainRecord[]): void {
    const corrupt = (i: number, why: string): ChainLogError => new ChainLogError(`devnet ${this.network} chain log record ${i + 1}: ${why}`);
    records.forEach((r, i) => {
      if ((i === 0) !== (r.op === 'genesis')) throw corrupt(i, i === 0 ? 'the log must start with its genesis' : 'a second genesis');
      switch (r.op) {
        case 'genesis': {
          if (r.chain_id !== this.chainId) throw corrupt(i, `chain id ${r.chain_id}, this network is ${this.chainId}`);
          const g = this.genesis(r.timestamp);
          if (g.hash !== r.hash) throw corrupt(i, `genesis hashes ${g.hash}, the log says ${r.hash}`);
          this.blocks.push(g);
          this.serial = 1;
          return;
        }
        case 'tx': {
          // Verified when it was accepted; only decoded now.
          const v = verifyTx(r.raw, { chainId: this.chainId, hrp: this.hrp, verify: () => true });
          if (!v.ok) throw corrupt(i, `transaction does not decode: ${v.error.message}`);
          this.admit(v);
          return;
        }
        case 'block': {
          const taken = new Set(r.txs);
          const gone = new Set(r.discarded);
          const txs = r.txs.map((h) => {
            const p = this.mempool.get(h);
            if (!p) throw corrupt(i, `block takes ${h}, which is not pending`);
            this.mempool.forget(p);
            return this.ledger.execute(p);
          });
          for (const h of r.discarded) {
            const p = this.mempool.get(h);
            if (p) this.mempool.forget(p);
          }
          this.mempool.keep(this.mempool.all().filter((p) => !taken.has(p.hash) && !gone.has(p.hash)));
          const block = this.seal(r.timestamp, r.serial, txs);
          if (block.height !== r.height || block.hash !== r.hash) throw corrupt(i, `block ${block.height} hashes ${block.hash}, the log says ${r.height} ${r.hash}`);
          this.serial = r.serial + 1;
          return;
        }
        case 'faucet':
          this.ledger.credit(r.address, BigInt(r.amount));
          return;
        case 'reorg':
          this.unwind(r.depth, r.drop);
          return;
      }
    });
  }

  /** Undoes a block's transactions, last first. */
  private revertBlock(b: Block): void {
    for (const t of [...b.txs].reverse()) {
      this.ledger.revert(t);
      this.included.delete(t.pool.hash);
    }
  }
}

function ref(b: Block): HeadRef {
  return { height: b.height, hash: b.hash };
}
