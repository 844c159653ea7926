/**
 * The indexer's mempool pass: matched transactions seen pending, and the ones that left the
 * chain and the mempool both (dropped). Positions and the follow loop are in indexer.ts.
 */
import type { Db } from '../../../storage/db.ts';
import type { ActorEnvelope } from '../../engine/actor-types.ts';
import type { AnmRpcClient } from '../rpc-client.ts';
import type { ChainTx } from '../rpc-types.ts';
import { legsOf } from './matching.ts';
import type { RefRow } from './store.ts';
import { forgetWatched, reorgedOut } from './store-depth.ts';
import { forgetPending, loadPending, notePending, type Target } from './store-pending.ts';

export interface MempoolPass {
  db: Db;
  network: string;
  rpc: Pick<AnmRpcClient, 'pendingTransactions' | 'getTransactionReceipt'>;
  refsFor: (txs: readonly ChainTx[]) => Promise<Map<string, RefRow>>;
  /** The pass's one position (ADR 0016), reserved on first use. */
  position: () => Promise<number>;
  publish: (type: string, target: Target, event: ActorEnvelope['event']) => Promise<void>;
  now: number;
}

export async function scanMempool(m: MempoolPass): Promise<void> {
  const txs = await m.rpc.pendingTransactions();
  const refs = await m.refsFor(txs);
  // Durable (ADR 0033): what any earlier lease holder saw pending, so this one reports its drop.
  const pending = await loadPending(m.db, m.network);
  const live = new Set<string>();
  for (const tx of txs) {
    live.add(tx.hash);
    const ref = refs.get(tx.reference);
    if (!ref || pending.has(tx.hash)) continue;
    const legs = legsOf(tx, ref);
    if (!legs) continue;
    const target = { kind: ref.kind, id: ref.actor_id };
    const p = await m.position();
    await m.publish('tx.seen', target, { type: 'chain.tx.seen', id: `seen:${tx.hash}@${p}`, at: m.now, tx_hash: tx.hash, from: tx.from, ...legs, pos: p });
    await notePending(m.db, m.network, tx.hash, target);
  }
  const gone = (hash: string, target: Target) => dropped(m, hash, target);
  for (const [hash, target] of pending) {
    if (live.has(hash)) continue;
    await gone(hash, target);
  }
  // A reorg took these off the chain (chain.reorged said so) and the node did not put them
  // back in its mempool: nothing else would ever tell their actors that they are gone, and a
  // refund would wait SUBMITTED for good. Their watch rows (block unknown) are durable, so a
  // restart or another lease holder finishes what this pass could not.
  for (const o of await reorgedOut(m.db, m.network)) {
    if (live.has(o.tx_hash)) continue;
    await gone(o.tx_hash, { kind: o.kind, id: o.actor_id });
  }
}

/** Gone from the mempool: mined (the block scan reports it) or dropped, said once. */
async function dropped(m: MempoolPass, hash: string, target: Target): Promise<void> {
  if (!(await m.rpc.getTransactionReceipt(hash))) {
    const p = await m.position();
    await m.publish('tx.dropped', target, { type: 'chain.tx.dropped', id: `drop:${hash}@${p}`, at: m.now, tx_hash: hash, pos: p });
    await forgetWatched(m.db, m.network, hash, target.id);
  }
  await forgetPending(m.db, m.network, hash);
}
