/**
 * Reads of payment-intent actors for the merchant API: snapshots as the engine stored them,
 * scoped to merchant and mode (spec rule 9). Nothing here writes domain state.
 */
import { TerminalError } from '../errors.ts';
import type { Db, SqlParam } from '../../storage/db.ts';
import type { PersistedSnapshot } from '../../machines/kit/step.ts';
import type { Mode } from './secrets.ts';

export interface IntentRow {
  id: string;
  state: string;
  snapshot: PersistedSnapshot;
  /** The actor's version (lists only): a page that also follows the feed keeps the newer. */
  version?: number;
  merchant: string | null;
  mode: Mode | null;
}

export interface ListQuery {
  merchant: string;
  mode: Mode;
  limit: number;
  status?: string | undefined;
  /** Exact id of the intent a merchant_order_id maps to (ADR 0006). */
  id?: string | undefined;
  startingAfter?: string | undefined;
  /** The actor kind listed: payment intents unless named (invoices list the same way). */
  kind?: 'payment_intent' | 'invoice';
}

/** What a list's cursor names, in its message. */
const LISTED = { payment_intent: 'payment intent', invoice: 'invoice' } as const;

export class CursorNotFound extends TerminalError {
  constructor(kind: keyof typeof LISTED = 'payment_intent') {
    super('cursor_not_found', `starting_after names no ${LISTED[kind]} of this merchant and mode`);
  }
}

export interface BalanceFigures {
  settled: bigint;
  pending: bigint;
  protocol_fees_paid: bigint;
}

const SETTLED = `('PAID', 'PARTIALLY_REFUNDED', 'REFUNDED')`;
const PENDING = `('PAYMENT_DETECTED', 'CONFIRMING', 'OVERPAID')`;
const COUNTED = `('PAID', 'PARTIALLY_REFUNDED', 'REFUNDED', 'PAYMENT_DETECTED', 'CONFIRMING', 'OVERPAID')`;

export class IntentReads {
  constructor(private readonly db: Db) {}

  /** Any intent by id (the public payment.json: the unguessable id is the capability). */
  async byId(id: string): Promise<IntentRow | null> {
    const { rows } = await this.db.query<IntentRow>(
      `SELECT id, state, snapshot, merchant, mode FROM actors WHERE id = $1 AND kind = 'payment_intent'`,
      [id],
    );
    return rows[0] ?? null;
  }

  /** Newest first; `limit + 1` rows are fetched so the caller can tell `has_more`. */
  async list(q: ListQuery): Promise<{ rows: IntentRow[]; hasMore: boolean }> {
    const params: SqlParam[] = [q.merchant, q.mode, q.kind ?? 'payment_intent'];
    const where = [`merchant = $1`, `mode = $2`, `kind = $3`];
    if (q.status) where.push(`state = $${params.push(q.status)}`);
    if (q.id) where.push(`id = $${params.push(q.id)}`);
    if (q.startingAfter) {
      const cursor = await this.db.query(`SELECT 1 FROM actors WHERE id = $1 AND merchant = $2 AND mode = $3 AND kind = $4`, [
        q.startingAfter,
        q.merchant,
        q.mode,
        q.kind ?? 'payment_intent',
      ]);
      if (cursor.rowCount === 0) throw new CursorNotFound(q.kind);
      const p = params.push(q.startingAfter);
      where.push(`(created_at, id) < (SELECT created_at, id FROM actors WHERE id = $${p})`);
    }
    const limit = params.push(q.limit + 1);
    const { rows } = await this.db.query<IntentRow>(
      `SELECT id, state, snapshot, merchant, mode, version FROM actors WHERE ${where.join(' AND ')} ORDER BY created_at DESC, id DESC LIMIT $${limit}`,
      params,
    );
    return { rows: rows.slice(0, q.limit), hasMore: rows.length > q.limit };
  }

  /**
   * Settled: what the merchant's leg received on settled intents, less confirmed refunds.
   * Pending: the merchant leg of matched transactions not yet at depth. Fees: the fee leg
   * paid on settled intents.
   */
  async balance(merchant: string, mode: Mode): Promise<BalanceFigures> {
    const { rows } = await this.db.query<{ settled: string; pending: string; fees: string }>(
      `WITH i AS (
         SELECT state, snapshot->'context' AS c FROM actors
          WHERE merchant = $1 AND mode = $2 AND kind = 'payment_intent' AND state IN ${COUNTED}
       )
       SELECT
         coalesce(sum(CASE WHEN state IN ${SETTLED} THEN coalesce((c->'tx'->>'merchant_leg')::numeric, (c->>'merchant_amount')::numeric)
           - (SELECT coalesce(sum((r->>'amount')::numeric), 0) FROM jsonb_array_elements(c->'refunds') r) END), 0)::text AS settled,
         coalesce(sum(CASE WHEN state IN ${PENDING} THEN coalesce((c->'tx'->>'merchant_leg')::numeric, 0) END), 0)::text AS pending,
         coalesce(sum(CASE WHEN state IN ${SETTLED} THEN coalesce((c->'tx'->>'fee_leg')::numeric, (c->>'protocol_fee')::numeric) END), 0)::text AS fees
       FROM i`,
      [merchant, mode],
    );
    const r = rows[0]!;
    return { settled: BigInt(r.settled), pending: BigInt(r.pending), protocol_fees_paid: BigInt(r.fees) };
  }
}
