/**
 * The indexer's SQL on its own tables (storage/migrations/0003_chain.sql): the reference index, the settlement
 * window, the last block hashes and the cursor. Kept apart from the follow loop in indexer.ts.
 */
import type { Db } from '../../../storage/db.ts';
import type { FullChainBlock } from '../rpc-types.ts';

/** What the cursor and the hash table keep of a block (its transactions are not needed once matched). */
export type BlockRef = Pick<FullChainBlock, 'height' | 'hash' | 'parent_hash'>;

export interface RefRow {
  reference: string;
  actor_id: string;
  kind: string;
  recipient: string;
  treasury: string | null;
  required: number;
}

/** A matched transaction entering the settlement window: tx hash, actor id, actor kind, required depth. */
export type WatchRow = [tx: string, actor: string, kind: string, required: number];

export async function lookupRefs(db: Db, network: string, refs: string[]): Promise<Map<string, RefRow>> {
  if (refs.length === 0) return new Map();
  const { rows } = await db.query<RefRow>(
    `SELECT reference, actor_id, kind, recipient, treasury, required FROM chain_refs WHERE network = $1 AND reference = ANY($2::text[])`,
    [network, refs],
  );
  return new Map(rows.map((r) => [r.reference, r]));
}

export interface Cursor {
  height: number;
  hash: string;
  /** The head depth signals were last published for (ADR 0010). */
  depth_head: number | null;
}

export async function readCursor(db: Db, network: string): Promise<Cursor | null> {
  const { rows } = await db.query<Cursor>(`SELECT height, hash, depth_head FROM chain_cursor WHERE network = $1`, [network]);
  return rows[0] ?? null;
}

/**
 * Watch rows (with the position the block was applied at), the block hash and the cursor in one
 * statement; the block's matched transactions are no longer pending (ADR 0033).
 */
export async function recordBlock(db: Db, network: string, block: BlockRef, watch: readonly WatchRow[], pos: number): Promise<void> {
  await db.query(
    `WITH w AS (
       INSERT INTO chain_watch (network, tx_hash, actor_id, kind, required, block_height, block_hash, inclusion_pos)
       SELECT $1, w.tx, w.actor, w.kind, w.required, $6, $7, $9 FROM unnest($2::text[], $3::text[], $4::text[], $5::int[]) AS w(tx, actor, kind, required)
       ON CONFLICT (network, tx_hash, actor_id) DO UPDATE SET block_height = EXCLUDED.block_height, block_hash = EXCLUDED.block_hash, inclusion_pos = EXCLUDED.inclusion_pos),
     p AS (DELETE FROM chain_pending WHERE network = $1 AND cardinality($2::text[]) > 0 AND tx_hash = ANY($2::text[])),
     b AS (
       INSERT INTO chain_blocks (network, height, hash, parent_hash) VALUES ($1, $6, $7, $8)
       ON CONFLICT (network, height) DO UPDATE SET hash = EXCLUDED.hash, parent_hash = EXCLUDED.parent_hash)
     INSERT INTO chain_cursor (network, height, hash) VALUES ($1, $6, $7)
     ON CONFLICT (network) DO UPDATE SET height = EXCLUDED.height, hash = EXCLUDED.hash, updated_at = now()`,
    [network, watch.map((w) => w[0]), watch.map((w) => w[1]), watch.map((w) => w[2]), watch.map((w) => w[3]), block.height, block.hash, block.parent_hash, pos],
  );
}

/** Drops block hashes and window rows below `height`: reorgs deeper than the horizon are not followed. */
export async function pruneBelow(db: Db, network: string, height: number): Promise<void> {
  await db.query(`DELETE FROM chain_blocks WHERE network = $1 AND height < $2`, [network, height]);
  await db.query(`DELETE FROM chain_watch WHERE network = $1 AND block_height < $2`, [network, height]);
}
