import type { Db } from '../../../storage/db.ts';
import type { Bus } from '../../bus/types.ts';
import type { ActorEnvelope } from '../../engine/actor-types.ts';
import type { AnmRpcClient } from '../rpc-client.ts';
import type { ChainTx, FullChainBlock } from '../rpc-types.ts';
import { recordIndexedBlock, recordIndexerHead } from '../../ops/metrics.ts';
import { releaseLease, tryLease } from './lease.ts';
import { pruneBelow, readCursor, recordBlock, type BlockRef, type RefRow, type WatchRow } from './store.ts';
import { findFork, legsOf, refsOf } from './matching.ts';
import { scanMempool } from './mempool.ts';
import { reconcileIntents } from './reconcile.ts';
import { rewindTo, watchedAbove } from './store-depth.ts';
import { signalDepth, type DepthSignalDeps } from './depth-signals.ts';
import { publishIncluded } from './publish.ts';
import { checkGenesis, DifferentChainError, reservePositions } from './positions.ts';

export { DifferentChainError } from './positions.ts';
import type { IncludedTx } from './signals.ts';

export type { BlockSignal } from './signals.ts';

export type NetworkName = 'test' | 'live';

export interface IndexerOptions {
  network: NetworkName;
  rpc: Pick<AnmRpcClient, 'blockNumber' | 'getBlockByNumber' | 'prefetchFullBlock' | 'pendingTransactions' | 'getTransactionReceipt'>;
  db: Db;
  bus: Bus;
  /** Lease holder name; unique per process. */
  holder: string;
  pollMs?: number;
  leaseMs?: number;
  /** First height to scan on an empty cursor (default: the current head). */
  startHeight?: number;
  /** Blocks kept for reorg detection. */
  horizon?: number;
  /** Blocks scanned per tick, so one tick never holds the loop for long. */
  maxBlocksPerTick?: number;
  /** Blocks fetched and matched ahead of the one being recorded (default 4). */
  pipeline?: number;
  /** Actors per depth-signal message (default `BLOCK_SIGNAL_CHUNK`; tests make it small). */
  blockSignalChunk?: number;
  now?: () => number;
  onError?: (err: unknown) => void;
  /** The intents the reconcile pass re-issued their transaction to (ADR 0033), for the log. */
  onReconciled?: (intentIds: string[]) => void;
}

export interface IndexerStats {
  blocks: number;
  txs: number;
  matched: number;
  /** Actor events the published signals stand for. */
  signals: number;
  /** Bus messages published (a block's matched transactions share one). */
  messages: number;
  reorgs: number;
}

/**
 * Follows one network's head through the JSON-RPC client only, so the same code follows a
 * real node. Matches transactions by reference plus recipient, publishes chain signals on
 * `chain.<network>.*`; per block the work is the block's transactions plus the actors whose
 * transaction is inside the settlement window.
 */
export class ChainIndexer {
  readonly stats: IndexerStats = { blocks: 0, txs: 0, matched: 0, signals: 0, messages: 0, reorgs: 0 };
  private timer: NodeJS.Timeout | undefined;
  private stopped = true;
  private running: Promise<void> | undefined;
  private leader = false;
  /** Set once the node serves a chain with another genesis: following stops (DESIGN §3). */
  private haltedFor: string | null = null;
  /** The reconcile pass (ADR 0033) runs once per process, in its first pass as lease holder. */
  private reconciled = false;
  private genesis: string | null = null;

  private readonly depthDeps: DepthSignalDeps;

  constructor(private readonly o: IndexerOptions) {
    this.depthDeps = { db: o.db, bus: o.bus, rpc: o.rpc, network: o.network, chunk: o.blockSignalChunk, reserve: (n) => this.reserve(n), now: () => this.now };
  }

  private get now(): number {
    return (this.o.now ?? Date.now)();
  }

  start(): void {
    this.stopped = false;
    this.schedule(0);
  }

  private schedule(ms: number): void {
    this.timer = setTimeout(() => {
      this.running = this.tick()
        .catch((err: unknown) => this.o.onError?.(err))
        .finally(() => {
          this.running = undefined;
          if (!this.stopped && !this.haltedFor) this.schedule(this.o.pollMs ?? 250);
        });
    }, ms);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
    if (this.leader) await releaseLease(this.o.db, this.o.network, this.o.holder).catch(() => undefined);
  }

  isLeader(): boolean {
    return this.leader;
  }

  /** Why following stopped (the node serves another chain), or null while following. */
  halted(): string | null {
    return this.haltedFor;
  }

  /** One pass: hold the lease, look at the mempool, follow the head. */
  async tick(): Promise<void> {
    if (this.haltedFor) return;
    this.leader = await tryLease(this.o.db, this.o.network, this.o.holder, this.o.leaseMs ?? 10_000);
    if (!this.leader) return;
    await this.followHead();
    if (this.haltedFor) return;
    if (!this.reconciled) await this.reconcile();
    await this.scanMempool();
  }

  /** Intents an indexer older than positions left waiting for a transfer the chain has (ADR 0033). */
  private async reconcile(): Promise<void> {
    const repaired = await reconcileIntents({
      db: this.o.db,
      network: this.o.network,
      rpc: this.o.rpc,
      reserve: () => this.reserve(1),
      publish: (type, target, event) => this.publish(type, target, event),
      now: this.now,
    });
    this.reconciled = true;
    if (repaired.length > 0) this.o.onReconciled?.(repaired);
  }

  /** `n` fresh positions (ADR 0016), the first returned; refused once the lease is lost. */
  private reserve(n: number): Promise<number> {
    return reservePositions(this.o.db, this.o.network, this.o.holder, n);
  }

  /** False once the node is found serving another chain (DESIGN §3); following stops then. */
  private async sameChain(): Promise<boolean> {
    const seen = await checkGenesis(this.o.db, this.o.rpc, this.o.network, this.genesis);
    if (seen.ok) {
      this.genesis = seen.genesis;
      return true;
    }
    this.haltedFor = seen.reason;
    this.o.onError?.(new DifferentChainError(seen.reason));
    return false;
  }

  private async publish(type: string, target: { kind: string; id: string }, event: ActorEnvelope['event']): Promise<void> {
    const env: ActorEnvelope = { target, event };
    await this.o.bus.publish(`chain.${this.o.network}.${type}`, env, { msgId: `${target.id}:${event.id}` });
    this.stats.signals += 1;
    this.stats.messages += 1;
  }

  private refsFor(txs: readonly ChainTx[]): Promise<Map<string, RefRow>> {
    return refsOf(this.o.db, this.o.network, txs);
  }

  private async scanMempool(): Promise<void> {
    let pos: number | undefined;
    await scanMempool({
      db: this.o.db,
      network: this.o.network,
      rpc: this.o.rpc,
      refsFor: (txs) => this.refsFor(txs),
      position: async () => (pos ??= await this.reserve(1)),
      publish: (type, target, event) => this.publish(type, target, event),
      now: this.now,
    });
  }

  private async followHead(): Promise<void> {
    const head = await this.o.rpc.blockNumber();
    recordIndexerHead(this.o.network, head);
    const stored = await readCursor(this.o.db, this.o.network);
    if (stored) recordIndexedBlock(this.o.network, stored.height);
    let cur: { height: number; hash: string } | null = stored;
    // The head depth was last published for, as read above; a reorg lowers it in the database.
    let depthHead = stored?.depth_head ?? -1;
    // Once per process (and on every suspected reorg below): is this still our chain?
    if (this.genesis === null && !(await this.sameChain())) return;
    if (!cur) {
      const start = Math.min(this.o.startHeight ?? head, head);
      const b = start > 0 ? await this.o.rpc.getBlockByNumber(start - 1, false) : null;
      cur = { height: start - 1, hash: b?.hash ?? '' };
    } else if (cur.height > 0 || cur.hash) {
      const b = await this.o.rpc.getBlockByNumber(cur.height, false);
      if (!b || b.hash !== cur.hash) {
        if (!(await this.sameChain())) return;
        cur = await this.reorg(cur, head);
        depthHead = -1;
      }
    }
    const last = Math.min(head, cur.height + (this.o.maxBlocksPerTick ?? 500));
    // One position per block this tick may apply, reserved before any is read (ADR 0016).
    const base = last > cur.height ? await this.reserve(last - cur.height) : 0;
    const from = cur.height;
    const ahead = Math.max(1, this.o.pipeline ?? 4);
    const fetches = new Map<number, Promise<() => FullChainBlock | null>>();
    const inflight: Promise<void>[] = [];
    let recorded: Promise<void> = Promise.resolve();
    let tip = cur;
    for (let h = cur.height + 1; h <= last; h++) {
      for (let k = h; k <= Math.min(last, h + ahead - 1); k++) {
        if (fetches.has(k)) continue;
        const f = this.o.rpc.prefetchFullBlock(k);
        f.catch(() => undefined); // awaited below, or dropped unread when the loop stops early
        fetches.set(k, f);
      }
      const block = (await fetches.get(h)!)();
      fetches.delete(h);
      if (!block) break;
      if (tip.hash && block.parent_hash !== tip.hash) {
        await recorded;
        if (!(await this.sameChain())) return;
        tip = await this.reorg(tip, head);
        depthHead = -1;
        break;
      }
      const step = this.scanBlock(block, head, recorded, base + (h - from - 1));
      step.catch(() => undefined); // the next block's step (or the await after the loop) reports it
      recorded = step;
      inflight.push(step);
      tip = { height: block.height, hash: block.hash };
      if (inflight.length >= ahead) await inflight.shift();
    }
    await recorded;
    // An idle tick (no new block) costs no depth transaction.
    if (depthHead < tip.height) await this.depthSignals(tip);
  }

  /**
   * Matches and publishes while earlier blocks are still being recorded (lookups and publishes
   * of several blocks overlap), then records this block once `before`, the previous block's
   * step, is done: the cursor only moves in height order and never past an unpublished block.
   */
  private async scanBlock(block: FullChainBlock, head: number, before: Promise<void>, pos: number): Promise<void> {
    const refs = await this.refsFor(block.transactions);
    const watch: WatchRow[] = [];
    const included: IncludedTx[] = [];
    for (const tx of block.transactions) {
      const ref = refs.get(tx.reference);
      if (!ref) continue;
      const legs = legsOf(tx, ref);
      if (!legs) continue;
      included.push({ kind: ref.kind, id: ref.actor_id, tx_hash: tx.hash, from: tx.from, ...legs, receipt: tx.status });
      watch.push([tx.hash, ref.actor_id, ref.kind, ref.required]);
    }
    // Nothing below touches the transactions again: with only these kept across the awaits, a
    // block's parsed transactions die young instead of surviving (and being copied by) the
    // scavenges that run while the pipeline waits on NATS and PostgreSQL.
    const ref: BlockRef = { height: block.height, hash: block.hash, parent_hash: block.parent_hash };
    const txCount = block.transactions.length;
    await this.signalIncluded(ref, head, included, pos);
    await before;
    await recordBlock(this.o.db, this.o.network, ref, watch, pos);
    recordIndexedBlock(this.o.network, ref.height);
    if (ref.height % 32 === 0) await pruneBelow(this.o.db, this.o.network, ref.height - (this.o.horizon ?? 128));
    this.stats.blocks += 1;
    this.stats.txs += txCount;
  }

  /**
   * One message per block (chunked) instead of one per transaction: the router fans it out.
   * Published before the cursor moves past the block, so a crash re-publishes, never skips.
   */
  private async signalIncluded(block: BlockRef, head: number, txs: IncludedTx[], pos: number): Promise<void> {
    const base = { block_height: block.height, block_hash: block.hash, head: Math.max(head, block.height), at: this.now, pos };
    const { messages } = await publishIncluded(this.o.bus, this.o.network, base, txs);
    this.stats.matched += txs.length;
    this.stats.signals += txs.length;
    this.stats.messages += messages;
  }

  private async depthSignals(tip: { height: number; hash: string }): Promise<void> {
    const { signals, messages } = await signalDepth(this.depthDeps, tip);
    this.stats.signals += signals;
    this.stats.messages += messages;
  }

  /** Walks back to the fork point, tells every actor whose tx left the chain, rewinds the cursor. */
  private async reorg(cur: { height: number; hash: string }, head: number): Promise<{ height: number; hash: string }> {
    this.stats.reorgs += 1;
    const fork = await findFork(this.o.db, this.o.rpc, this.o.network, cur.height);
    // A position per block reverted; the signals state the chain once all are: the last one.
    const pos = (await this.reserve(Math.max(1, cur.height - fork.height))) + Math.max(1, cur.height - fork.height) - 1;
    const gone = await watchedAbove(this.o.db, this.o.network, fork.height);
    for (const g of gone) {
      const event = { type: 'chain.reorged', id: `reorg:${g.tx_hash}:${g.block_hash}@${pos}`, at: this.now, tx_hash: g.tx_hash, block_hash: g.block_hash, head, pos };
      await this.publish('tx.reorged', { kind: g.kind, id: g.actor_id }, event);
    }
    await rewindTo(this.o.db, this.o.network, fork);
    return fork;
  }
}
