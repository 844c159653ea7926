/**
 * The indexer's positions (migration 0018, ADR 0016): reserved in PostgreSQL before the facts
 * they stamp are observed, so a restart, a takeover by another process or the reorg path
 * never issues a position lower than one already used.
 */
import type { Db } from '../../../storage/db.ts';
import type { AnmRpcClient } from '../rpc-client.ts';

/** The lease was lost between the tick's check and the reservation: stop publishing. */
export class LeaseLostError extends Error {
  constructor(network: string) {
    super(`indexer lease for ${network} lost; not publishing`);
    this.name = 'LeaseLostError';
  }
}

/**
 * Reserves `n` positions and returns the first. Only the live lease holder gets any: a process
 * paused past its lease (a long GC pause, SIGSTOP) cannot stamp stale facts with fresh numbers.
 */
export async function reservePositions(db: Db, network: string, holder: string, n: number): Promise<number> {
  const { rows } = await db.query<{ pos: string }>(
    `WITH lease AS (SELECT 1 FROM chain_leases WHERE network = $1 AND holder = $2 AND expires_at > now())
     INSERT INTO chain_positions (network, pos) SELECT $1, $3 FROM lease
     ON CONFLICT (network) DO UPDATE SET pos = chain_positions.pos + $3
     RETURNING pos::text AS pos`,
    [network, holder, n],
  );
  const top = rows[0];
  if (!top) throw new LeaseLostError(network);
  return Number(top.pos) - n + 1;
}

/** The node's genesis is not the one recorded: it serves another chain, not a reorg of ours. */
export class DifferentChainError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DifferentChainError';
  }
}

/**
 * DESIGN §3: a node whose genesis differs from the one recorded serves a different chain (a
 * devnet started afresh without its data, a node pointed at another network). Walking back
 * would take every settlement off the chain; the indexer must stop instead and touch nothing.
 * The first genesis seen is recorded.
 */
export async function checkGenesis(
  db: Db,
  rpc: Pick<AnmRpcClient, 'getBlockByNumber'>,
  network: string,
  known: string | null,
): Promise<{ ok: true; genesis: string | null } | { ok: false; reason: string }> {
  const g = await rpc.getBlockByNumber(0, false);
  if (!g) return { ok: true, genesis: known }; // a node that cannot serve its genesis yet is no evidence of another chain
  let recorded = known ?? (await readGenesis(db, network));
  if (recorded === null) {
    await recordGenesis(db, network, g.hash);
    recorded = (await readGenesis(db, network)) ?? g.hash;
  }
  if (recorded === g.hash) return { ok: true, genesis: recorded };
  return {
    ok: false,
    reason:
      `the ${network} node serves a different chain (genesis ${g.hash.slice(0, 16)}…, recorded ${recorded.slice(0, 16)}…): ` +
      'the indexer stopped following it and changed nothing; every settlement stands. Point the service at the original chain, or start on a fresh database.',
  };
}

/** The genesis hash recorded for the network, or null before the first block was followed. */
export async function readGenesis(db: Db, network: string): Promise<string | null> {
  const { rows } = await db.query<{ genesis_hash: string | null }>(`SELECT genesis_hash FROM chain_positions WHERE network = $1`, [network]);
  return rows[0]?.genesis_hash ?? null;
}

/** Records the genesis hash once; a different one already recorded is kept. */
export async function recordGenesis(db: Db, network: string, hash: string): Promise<void> {
  await db.query(
    `INSERT INTO chain_positions (network, genesis_hash) VALUES ($1, $2)
     ON CONFLICT (network) DO UPDATE SET genesis_hash = COALESCE(chain_positions.genesis_hash, EXCLUDED.genesis_hash)`,
    [network, hash],
  );
}
