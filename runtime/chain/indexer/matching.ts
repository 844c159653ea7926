/**
 * Pieces of the follow loop that need no indexer state: matching a transaction to an actor
 * (reference plus recipient, never amount alone) and finding the fork point of a reorg.
 */
import type { Db } from '../../../storage/db.ts';
import type { AnmRpcClient } from '../rpc-client.ts';
import type { ChainTx } from '../rpc-types.ts';
import { lookupRefs, type RefRow } from './store.ts';
import { storedBlocksFrom } from './store-depth.ts';

const sumTo = (tx: ChainTx, address: string | null): bigint =>
  address === null ? 0n : tx.outputs.reduce((s, o) => (o.to === address ? s + o.amount : s), 0n);

/** A marketplace purchase leg's reference (DESIGN §5 "Legs"): `mp1:<intent>:<leg>`. */
const MARKET_LEG = /^(mp1:pi_[0-9a-z]+):(seller|fee)$/;

/**
 * The actors the transactions' payment, refund and purchase-leg references belong to. A
 * purchase has one row (`mp1:<intent>`) for both legs: the seller leg pays its recipient, the
 * fee leg its treasury.
 */
export async function refsOf(db: Db, network: string, txs: readonly ChainTx[]): Promise<Map<string, RefRow>> {
  const refs = new Set<string>();
  const legs = new Map<string, { base: string; leg: string }>();
  for (const { reference: r } of txs) {
    if (r.startsWith('pr1:') || r.startsWith('rf1:')) refs.add(r);
    else if (r.startsWith('mp1:')) {
      const m = MARKET_LEG.exec(r);
      if (m?.[1] && m[2]) {
        refs.add(m[1]);
        legs.set(r, { base: m[1], leg: m[2] });
      }
    }
  }
  const rows = await lookupRefs(db, network, [...refs]);
  for (const [r, { base, leg }] of legs) {
    const row = rows.get(base);
    if (row) rows.set(r, { ...row, reference: r, recipient: leg === 'fee' ? (row.treasury ?? '') : row.recipient, treasury: null });
  }
  // A transfer carrying the bare `mp1:<intent>` is no leg of it.
  for (const { base } of legs.values()) rows.delete(base);
  return rows;
}

/** What a matched tx pays to the recipient and to the treasury; null if the recipient is absent. */
export function legsOf(tx: ChainTx, ref: RefRow): { merchant_leg: string; fee_leg: string } | null {
  const merchant = sumTo(tx, ref.recipient);
  if (merchant === 0n) return null; // matched by reference AND recipient, never by amount alone
  return { merchant_leg: merchant.toString(), fee_leg: sumTo(tx, ref.treasury).toString() };
}

/** The newest kept block at or below `height` that the node still has: where a reorg forked. */
export async function findFork(db: Db, rpc: Pick<AnmRpcClient, 'getBlockByNumber'>, network: string, height: number): Promise<{ height: number; hash: string }> {
  const stored = await storedBlocksFrom(db, network, height);
  for (const s of stored) {
    const b = await rpc.getBlockByNumber(s.height, false);
    if (b && b.hash === s.hash) return { height: s.height, hash: s.hash };
  }
  return { height: (stored.at(-1)?.height ?? 0) - 1, hash: '' };
}
