/**
 * The point of sale's "today": the intents its keypad made (metadata `source: "pos"`) in one
 * merchant's mode since a given time, newest first, with the totals of those paid. Read from
 * the intents' snapshots; the point of sale never keeps a ledger of its own.
 */
import type { PersistedSnapshot } from '../../machines/kit/step.ts';
import type { Db } from '../../storage/db.ts';
import type { Mode } from '../merchant/secrets.ts';

/** Metadata every point-of-sale intent carries, so its sales can be told from API ones. */
export const POS_SOURCE = 'pos';

/** The most sales one day's list shows (the totals count them all). */
export const SALES_SHOWN = 100;

export interface SaleRow {
  id: string;
  state: string;
  snapshot: PersistedSnapshot;
}

export interface SalesDay {
  rows: SaleRow[];
  count: number;
  paidCount: number;
  /** Sum of the paid intents' ANM amounts, nANM. */
  paidNanm: bigint;
}

const PAID = `('PAID', 'PARTIALLY_REFUNDED', 'REFUNDED')`;

export class PosSales {
  constructor(private readonly db: Db) {}

  async since(merchant: string, mode: Mode, from: Date): Promise<SalesDay> {
    const { rows } = await this.db.query<SaleRow & { count: number; paid_count: number; paid: string }>(
      `WITH s AS (
         SELECT id, state, snapshot, created_at FROM actors
          WHERE merchant = $1 AND mode = $2 AND kind = 'payment_intent' AND created_at >= $3
            AND snapshot->'context'->'metadata'->>'source' = '${POS_SOURCE}'
       ), t AS (
         SELECT count(*)::int AS count, (count(*) FILTER (WHERE state IN ${PAID}))::int AS paid_count,
                coalesce(sum((snapshot->'context'->>'anm_amount')::numeric) FILTER (WHERE state IN ${PAID}), 0)::text AS paid
           FROM s
       )
       SELECT s.id, s.state, s.snapshot, t.count, t.paid_count, t.paid
         FROM t LEFT JOIN LATERAL (SELECT * FROM s ORDER BY created_at DESC, id DESC LIMIT ${SALES_SHOWN}) s ON true`,
      [merchant, mode, from.toISOString()],
    );
    const t = rows[0];
    return {
      rows: rows.filter((r) => r.id !== null).map((r) => ({ id: r.id, state: r.state, snapshot: r.snapshot })),
      count: t?.count ?? 0,
      paidCount: t?.paid_count ?? 0,
      paidNanm: BigInt(t?.paid ?? '0'),
    };
  }
}
