/**
 * The indexer's SQL for depth and reorgs (storage/migrations/0003_chain.sql): the depth cursor, the
 * settlement window, and the rewind to a fork point. The follow loop is in indexer.ts.
 */
import type { Db, Queryable } from '../../../storage/db.ts';

/** Locks the network's cursor row and returns the head depth was last published for (null: no cursor yet). */
export async function lockDepthHead(q: Queryable, network: string): Promise<number | null> {
  const { rows } = await q.query<{ depth_head: number | null }>(`SELECT depth_head FROM chain_cursor WHERE network = $1 FOR UPDATE`, [network]);
  const row = rows[0];
  return row ? (row.depth_head ?? -1) : null;
}

/**
 * Actors whose transaction was still short of its required depth at head `last` and is included
 * by `head`, in a stable order (the depth signal is cut into chunks with ids by position).
 */
export async function inSettlementWindow(q: Queryable, network: string, last: number, head: number): Promise<Array<{ actor_id: string; kind: string; inclusion_pos: string | null }>> {
  const { rows } = await q.query<{ actor_id: string; kind: string; inclusion_pos: string | null }>(
    `SELECT actor_id, kind, inclusion_pos::text AS inclusion_pos FROM chain_watch
      WHERE network = $1 AND block_height IS NOT NULL AND block_height + required - 1 > $3 AND block_height <= $2
      ORDER BY kind, actor_id`,
    [network, head, last],
  );
  return rows;
}

export async function setDepthHead(q: Queryable, network: string, head: number): Promise<void> {
  await q.query(`UPDATE chain_cursor SET depth_head = $2 WHERE network = $1`, [network, head]);
}

/** Block hashes kept at or below `height`, newest first: the candidates for the fork point. */
export async function storedBlocksFrom(db: Db, network: string, height: number): Promise<Array<{ height: number; hash: string }>> {
  const { rows } = await db.query<{ height: number; hash: string }>(
    `SELECT height, hash FROM chain_blocks WHERE network = $1 AND height <= $2 ORDER BY height DESC`,
    [network, height],
  );
  return rows;
}

/** Matched transactions included above `height`: the ones a reorg to that height takes off the chain. */
export async function watchedAbove(db: Db, network: string, height: number): Promise<Array<{ tx_hash: string; actor_id: string; kind: string; block_hash: string }>> {
  const { rows } = await db.query<{ tx_hash: string; actor_id: string; kind: string; block_hash: string }>(
    `SELECT tx_hash, actor_id, kind, block_hash FROM chain_watch WHERE network = $1 AND block_height > $2`,
    [network, height],
  );
  return rows;
}

/** Moves window rows, block hashes and both cursors back to the fork point, in one transaction. */
export async function rewindTo(db: Db, network: string, fork: { height: number; hash: string }): Promise<void> {
  await db.tx(async (q) => {
    await q.query(`UPDATE chain_watch SET block_height = NULL, block_hash = NULL, inclusion_pos = NULL WHERE network = $1 AND block_height > $2`, [network, fork.height]);
    await q.query(`DELETE FROM chain_blocks WHERE network = $1 AND height > $2`, [network, fork.height]);
    await q.query(
      // Depth goes back to the fork too: transactions re-included above it are due again.
      `INSERT INTO chain_cursor (network, height, hash, depth_head) VALUES ($1, $2, $3, $2)
       ON CONFLICT (network) DO UPDATE SET height = EXCLUDED.height, hash = EXCLUDED.hash, updated_at = now(),
         depth_head = LEAST(chain_cursor.depth_head, EXCLUDED.height)`,
      [network, fork.height, fork.hash],
    );
  });
}

/** Matched transactions a reorg took off the chain whose fate is not known yet (rewindTo cleared their block). */
export async function reorgedOut(db: Db, network: string): Promise<Array<{ tx_hash: string; actor_id: string; kind: string }>> {
  const { rows } = await db.query<{ tx_hash: string; actor_id: string; kind: string }>(
    `SELECT tx_hash, actor_id, kind FROM chain_watch WHERE network = $1 AND block_height IS NULL`,
    [network],
  );
  return rows;
}

/** A transaction reported dropped: its watch row (off the chain) is done with. */
export async function forgetWatched(db: Db, network: string, txHash: string, actorId: string): Promise<void> {
  await db.query(`DELETE FROM chain_watch WHERE network = $1 AND tx_hash = $2 AND actor_id = $3 AND block_height IS NULL`, [network, txHash, actorId]);
}
