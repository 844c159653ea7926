/**
 * The ANM development node: one chain per network. The chain itself (accounts, mempool,
 * blocks, mining and unwinding) is chain.ts; the node admits transactions by the RPC's rules
 * (every one through the runtime's verifyTransaction: codec, chain id, hrp, signature; then
 * nonces, fee), mines on a timer or on request, and with a data directory appends every
 * change to its chain log (chain-log.ts) and replays that log on start, so a restart resumes
 * the same chain. Semantics are in docs/devnet.md and docs/adr/0007-devnet.md (fee burned,
 * faucet outside blocks, reorg rules).
 */
import { NETWORKS, decodeAddress, verifyTx, type NetworkName } from '../../../machines/chain/index.ts';
import { nativeSha256, verifyTransaction } from '../codec/verify.ts';
import { RpcError } from '../rpc-errors.ts';
import { U64_MAX, type HeadRef, type NonceTag, type ReorgResult } from '../rpc-types.ts';
import type { Block, BlockTx, PoolTx } from './block.ts';
import { DevnetChain } from './chain.ts';
import { ChainLog, ChainLogError, type ChainRecord } from './chain-log.ts';

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

export class DevnetNode {
  readonly network: NetworkName;
  readonly chainId: number;
  readonly hrp: string;
  readonly maxBlockTxs: number;
  readonly minFee: bigint;
  private readonly now: () => number;
  private readonly chain: DevnetChain;
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
    this.chain = new DevnetChain(this.chainId, this.maxBlockTxs);
    if (opts.dataDir) {
      this.log = ChainLog.open(opts.dataDir, () => {
        const g = this.chain.genesisBlock(this.now());
        return { op: 'genesis', chain_id: this.chainId, timestamp: g.timestamp, hash: g.hash };
      });
      try {
        this.replay(this.log.records);
      } catch (e) {
        this.log.close();
        throw e;
      }
    } else {
      this.chain.begin(this.chain.genesisBlock(this.now()));
    }
    this.setAutomine(opts.blockMs ?? 0);
  }

  // ---- reads -------------------------------------------------------------------------

  get height(): number {
    return this.chain.height;
  }

  get head(): Block {
    return this.chain.head;
  }

  get automineMs(): number {
    return this.blockMs;
  }

  blockAt(height: number): Block | undefined {
    return this.chain.blockAt(height);
  }

  balanceOf(address: string): bigint {
    return this.chain.ledger.balance(this.checkAddress(address));
  }

  /** `latest`: transactions included so far; `pending`: the next nonce to sign with (counts the sender's gap-free pending ones). */
  nonceOf(address: string, tag: NonceTag = 'pending'): bigint {
    const a = this.checkAddress(address);
    return tag === 'latest' ? this.accountNonce(a) : this.nextNonce(a);
  }

  pending(): readonly PoolTx[] {
    return this.chain.mempool.all();
  }

  findIncluded(hash: string): { block: Block; index: number; tx: BlockTx } | undefined {
    return this.chain.findIncluded(hash);
  }

  findPending(hash: string): PoolTx | undefined {
    return this.chain.mempool.get(hash);
  }

  // ---- writes ------------------------------------------------------------------------

  /** Verifies and queues a signed transaction; returns its hash or throws an RpcError. */
  sendRawTransaction(hex: string): string {
    const v = verifyTransaction(hex, { chainId: this.chainId, hrp: this.hrp });
    if (!v.ok) throw RpcError.of('tx_rejected', v.error.code, `transaction rejected: ${v.error.code}: ${v.error.message}`);
    const { tx, hash, from } = v;
    if (this.chain.mempool.get(hash)) throw RpcError.of('already_known', 'already_known', `transaction ${hash} is already in the mempool`, { tx_hash: hash });
    const accountNonce = this.accountNonce(from);
    if (tx.nonce < accountNonce) {
      throw RpcError.of('nonce_rejected', 'nonce_too_low', `nonce ${tx.nonce} of ${from} is already used (replayed transaction); the next nonce is ${this.nextNonce(from)}`, {
        nonce: tx.nonce.toString(),
        next_nonce: this.nextNonce(from).toString(),
      });
    }
    const taken = this.chain.mempool.withNonce(from, tx.nonce);
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
    this.chain.admit(v);
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
    const removedHashes = new Set(this.chain.above(forkHeight).flatMap((b) => b.txs.map((t) => t.pool.hash)));
    for (const h of drop) {
      if (!removedHashes.has(h)) throw RpcError.of('invalid_params', 'drop_not_in_reorg', `transaction ${h} is not in the last ${depth} block(s)`, { tx_hash: h });
    }
    const { removed, back } = this.chain.unwind(depth, drop);
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
    if (this.chain.ledger.balance(a) + amount > U64_MAX) throw RpcError.of('dev_refused', 'balance_overflow', 'balance would exceed 2^64-1 nANM');
    const balance = this.chain.ledger.credit(a, amount);
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
    return this.chain.ledger.nonce(address);
  }

  private nextNonce(address: string): bigint {
    return this.chain.nextNonce(address);
  }

  private mineOne(): Block {
    const { block, discarded } = this.chain.mineOne(this.now());
    const { height, timestamp, serial, hash } = block;
    this.log?.append({ op: 'block', height, timestamp, serial, hash, txs: block.txs.map((t) => t.pool.hash), discarded }, false);
    return block;
  }

  /** Rebuilds the chain from its log; every block must hash as recorded, or the log is not this node's. */
  private replay(records: readonly ChainRecord[]): void {
    const corrupt = (i: number, why: string): ChainLogError => new ChainLogError(`devnet ${this.network} chain log record ${i + 1}: ${why}`);
    records.forEach((r, i) => {
      if ((i === 0) !== (r.op === 'genesis')) throw corrupt(i, i === 0 ? 'the log must start with its genesis' : 'a second genesis');
      switch (r.op) {
        case 'genesis': {
          if (r.chain_id !== this.chainId) throw corrupt(i, `chain id ${r.chain_id}, this network is ${this.chainId}`);
          const g = this.chain.genesisBlock(r.timestamp);
          if (g.hash !== r.hash) throw corrupt(i, `genesis hashes ${g.hash}, the log says ${r.hash}`);
          this.chain.begin(g);
          return;
        }
        case 'tx': {
          // Verified when it was accepted; only decoded now.
          const v = verifyTx(r.raw, { chainId: this.chainId, hrp: this.hrp, verify: () => true, sha256: nativeSha256 });
          if (!v.ok) throw corrupt(i, `transaction does not decode: ${v.error.message}`);
          this.chain.admit(v);
          return;
        }
        case 'block': {
          const { mempool, ledger } = this.chain;
          const taken = new Set(r.txs);
          const gone = new Set(r.discarded);
          const txs = r.txs.map((h) => {
            const p = mempool.get(h);
            if (!p) throw corrupt(i, `block takes ${h}, which is not pending`);
            mempool.forget(p);
            return ledger.execute(p);
          });
          for (const h of r.discarded) {
            const p = mempool.get(h);
            if (p) mempool.forget(p);
          }
          mempool.keep(mempool.all().filter((p) => !taken.has(p.hash) && !gone.has(p.hash)));
          const block = this.chain.seal(r.timestamp, r.serial, txs);
          if (block.height !== r.height || block.hash !== r.hash) throw corrupt(i, `block ${block.height} hashes ${block.hash}, the log says ${r.height} ${r.hash}`);
          this.chain.serial = r.serial + 1;
          return;
        }
        case 'faucet':
          this.chain.ledger.credit(r.address, BigInt(r.amount));
          return;
        case 'reorg':
          this.chain.unwind(r.depth, r.drop);
          return;
      }
    });
  }
}

function ref(b: Block): HeadRef {
  return { height: b.height, hash: b.hash };
}
