/**
 * The indexer's pending set (storage/migrations/0009_chain_pending.sql, ADR 0033): matched
 * transactions seen in the mempool and not yet included or reported gone. It lives beside the
 * cursor rather than in one process, so a lease holder reports the drop of a transaction that
 * an earlier holder saw pending. Inclusion clears a row in the statement that records the block
 * (store.ts `recordBlock`).
 */
import type { Db } from '../../../storage/db.ts';

export type Target = { kind: string; id: string };

export async function loadPending(db: Db, network: string): Promise<Map<string, Target>> {
  const { rows } = await db.query<{ tx_hash: string; actor_id: string; kind: string }>(`SELECT tx_hash, actor_id, kind FROM chain_pending WHERE network = $1`, [network]);
  return new Map(rows.map((r) => [r.tx_hash, { kind: r.kind, id: r.actor_id }]));
}

/** Written after its `chain.tx.seen` is published: a failed publish leaves no row, and the next pass says it. */
export async function notePending(db: Db, network: string, txHash: string, target: Target): Promise<void> {
  await db.query(`INSERT INTO chain_pending (network, tx_hash, actor_id, kind) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING`, [network, txHash, target.id, target.kind]);
}

/** Gone from the mempool (mined, or reported dropped): no longer pending. */
export async function forgetPending(db: Db, network: string, txHash: string): Promise<void> {
  await db.query(`DELETE FROM chain_pending WHERE network = $1 AND tx_hash = $2`, [network, txHash]);
}
