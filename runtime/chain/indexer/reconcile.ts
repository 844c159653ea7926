/**
 * The reconcile pass (ADR 0033): repairs payment intents that an indexer older than positions
 * left out of step with the chain (issue 27: an inclusion that overtook its reorg was dropped as
 * handled, and the intent waits AWAITING_PAYMENT for good while its transfer is canonical and
 * deep). Positions keep this from happening again, but nothing would ever tell those intents.
 *
 * Run by the lease holder once per process, before following the head. It looks only at
 * intents of this network in a state that is still waiting for its transfer and whose journal
 * names a transaction (the one they matched before the reorg reopened them): few, so a start
 * costs one query and a receipt lookup per such intent. For each whose transaction the node
 * has canonical but the intent does not know in that block, it re-issues the current truth as
 * a positioned `chain.tx.included` (a fresh position, so it is news to the intent) and points
 * the settlement window at that inclusion, so depth reports follow it. Idempotent: an intent
 * that took the statement knows the transaction in that block and is skipped next time.
 */
import type { Db } from '../../../storage/db.ts';
import type { ActorEnvelope } from '../../engine/actor-types.ts';
import type { AnmRpcClient } from '../rpc-client.ts';
import { legsOf } from './matching.ts';

/** States that wait for a transfer or follow one that may have been lost (DESIGN §4). */
const WAITING = ['AWAITING_PAYMENT', 'PAYMENT_DETECTED', 'CONFIRMING', 'OVERPAID', 'EXPIRED'];

export interface ReconcileDeps {
  db: Db;
  network: string;
  rpc: Pick<AnmRpcClient, 'blockNumber' | 'getBlockByNumber' | 'getTransactionReceipt'>;
  /** One fresh position (ADR 0016); refused once the lease is lost. */
  reserve: () => Promise<number>;
  publish: (type: string, target: { kind: string; id: string }, event: ActorEnvelope['event']) => Promise<void>;
  now: number;
}

interface Candidate {
  id: string;
  reference: string;
  recipient: string;
  treasury: string | null;
  required: number;
  known_hash: string | null;
  known_block: string | null;
  txs: string[];
}

async function candidates(db: Db, network: string): Promise<Candidate[]> {
  const { rows } = await db.query<Candidate>(
    `SELECT a.id, r.reference, r.recipient, r.treasury, r.required,
            a.snapshot->'context'->'tx'->>'hash' AS known_hash, a.snapshot->'context'->'tx'->>'block_hash' AS known_block,
            ARRAY(SELECT DISTINCT e.event->>'tx_hash' FROM actor_events e
                   WHERE e.actor_id = a.id AND e.event->>'type' IN ('chain.tx.seen', 'chain.tx.included')) AS txs
       FROM chain_refs r JOIN actors a ON a.id = r.actor_id
      WHERE r.network = $1 AND r.kind = 'payment_intent' AND a.state = ANY($2::text[])
        AND EXISTS (SELECT 1 FROM actor_events e WHERE e.actor_id = a.id AND e.event->>'type' IN ('chain.tx.seen', 'chain.tx.included'))`,
    [network, WAITING],
  );
  return rows;
}

/** The settlement window follows the re-issued inclusion (depth reports name its position). */
async function watch(db: Db, network: string, c: Candidate, tx: string, block: { height: number; hash: string }, pos: number): Promise<void> {
  await db.query(
    `INSERT INTO chain_watch (network, tx_hash, actor_id, kind, required, block_height, block_hash, inclusion_pos)
     VALUES ($1, $2, $3, 'payment_intent', $4, $5, $6, $7)
     ON CONFLICT (network, tx_hash, actor_id) DO UPDATE SET block_height = EXCLUDED.block_height, block_hash = EXCLUDED.block_hash, inclusion_pos = EXCLUDED.inclusion_pos`,
    [network, tx, c.id, c.required, block.height, block.hash, pos],
  );
}

/** Re-issues the chain's truth to every waiting intent whose transaction is canonical in a block it does not know; returns their ids. */
export async function reconcileIntents(d: ReconcileDeps): Promise<string[]> {
  const repaired: string[] = [];
  let head: number | null = null;
  // One position for the pass, as the mempool pass takes (ADR 0016), reserved on first use.
  let pos: number | undefined;
  for (const c of await candidates(d.db, d.network)) {
    for (const hash of c.txs) {
      const receipt = await d.rpc.getTransactionReceipt(hash);
      if (!receipt) continue;
      if (c.known_hash === hash && c.known_block === receipt.block_hash) break; // in step: the indexer's signals follow it
      const block = await d.rpc.getBlockByNumber(receipt.block_height, true);
      const tx = block?.hash === receipt.block_hash ? block.transactions.find((t) => t.hash === hash) : undefined;
      const legs = tx ? legsOf(tx, { ...c, actor_id: c.id, kind: 'payment_intent' }) : null;
      if (!tx || !legs) continue;
      head ??= await d.rpc.blockNumber();
      pos ??= await d.reserve();
      await d.publish('tx.included', { kind: 'payment_intent', id: c.id }, {
        type: 'chain.tx.included',
        id: `inc:${hash}:${receipt.block_hash}@${pos}`,
        at: d.now,
        tx_hash: hash,
        from: tx.from,
        ...legs,
        block_height: receipt.block_height,
        block_hash: receipt.block_hash,
        receipt: receipt.status,
        head: Math.max(head, receipt.block_height),
        pos,
      });
      await watch(d.db, d.network, c, hash, { height: receipt.block_height, hash: receipt.block_hash }, pos);
      repaired.push(c.id);
      break; // one transaction per intent
    }
  }
  return repaired;
}
