/**
 * A purchase actor as read from its row: what quotes, purchases, their settlement, routed
 * execution and the purchase idempotency keys share.
 */
import type { PurchaseContext } from '../../machines/purchase/context.ts';
import type { PurchaseStatus } from '../../machines/purchase/view.ts';
import type { PersistedSnapshot } from '../../machines/kit/step.ts';
import type { Db } from '../../storage/db.ts';
import type { CachedActor } from '../engine/snapshot-cache.ts';

export const PURCHASE_KIND = 'purchase';

/** A purchase actor's row as read: its state and snapshot (and, read with a claim, the rest the engine keeps). */
export interface PurchaseRow {
  state: string;
  snapshot: PersistedSnapshot;
  version?: number;
  merchant?: string | null;
  mode?: string | null;
}

export interface PurchaseRead {
  ctx: PurchaseContext;
  status: PurchaseStatus;
  /** The whole row, when read with the idempotency claim: handed to the engine's optimistic path. */
  row?: CachedActor;
}

export const asRead = (row: { state?: string; status?: string; snapshot: PersistedSnapshot }): PurchaseRead => ({
  ctx: row.snapshot.context as PurchaseContext,
  status: (row.state ?? row.status) as PurchaseStatus,
});

/** The purchase as committed; null for an id that is no purchase. */
export async function readPurchase(db: Db, intentId: string): Promise<PurchaseRead | null> {
  const { rows } = await db.query<PurchaseRow>(`SELECT state, snapshot FROM actors WHERE id = $1 AND kind = $2`, [intentId, PURCHASE_KIND]);
  const row = rows[0];
  return row ? asRead(row) : null;
}
