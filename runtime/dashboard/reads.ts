/**
 * What the dashboard pages read: snapshots and the journal of a merchant's own actors, its
 * keys and its setup, always scoped to one merchant and mode (another merchant's id reads as
 * nothing). Nothing here writes domain state.
 */
import type { PersistedSnapshot } from '../../machines/kit/step.ts';
import type { Db, SqlParam } from '../../storage/db.ts';
import type { Mode } from '../merchant/secrets.ts';

export interface PaymentRow {
  id: string;
  state: string;
  version: number;
  snapshot: PersistedSnapshot;
}

export interface PaymentFilter {
  merchant: string;
  mode: Mode;
  limit: number;
  status?: string | undefined;
  /** ISO dates, inclusive from, exclusive to, on the creation time. */
  from?: string | undefined;
  to?: string | undefined;
  orderId?: string | undefined;
  /** The id of the last row of the previous page. */
  after?: string | undefined;
}

export interface JournalEntry {
  seq: number;
  type: string;
  state_before: string | null;
  state_after: string;
  at: string;
}

export interface KeyRow {
  id: string;
  kind: 'secret' | 'publishable';
  prefix: string;
  created_at: string;
  revoked_at: string | null;
  /** When a request last took a rate-limit lease for this key (secret keys only; approximate). */
  last_used_at: string | null;
}

export interface Setup {
  payout_address: string | null;
  payout_verified: boolean;
  webhook_url: string | null;
  active_secret_keys: number;
}

const iso = (v: Date | string | null): string | null => (v === null ? null : new Date(v).toISOString());

/** The most journal entries one timeline shows. */
export const TIMELINE_MAX = 1000;

export class DashboardReads {
  constructor(private readonly db: Db) {}

  /** Newest first, `limit + 1` fetched to tell `hasMore`; the cursor is the previous page's last id. */
  async payments(f: PaymentFilter): Promise<{ rows: PaymentRow[]; hasMore: boolean }> {
    const params: SqlParam[] = [f.merchant, f.mode];
    const where = [`a.merchant = $1`, `a.mode = $2`, `a.kind = 'payment_intent'`];
    if (f.status) where.push(`a.state = $${params.push(f.status)}`);
    if (f.from) where.push(`a.created_at >= $${params.push(f.from)}::timestamptz`);
    if (f.to) where.push(`a.created_at < $${params.push(f.to)}::timestamptz`);
    if (f.orderId) where.push(`a.snapshot->'context'->>'merchant_order_id' = $${params.push(f.orderId)}`);
    if (f.after) {
      const p = params.push(f.after);
      where.push(`(a.created_at, a.id) < (SELECT c.created_at, c.id FROM actors c WHERE c.id = $${p} AND c.merchant = $1 AND c.mode = $2)`);
    }
    const limit = params.push(f.limit + 1);
    const { rows } = await this.db.query<PaymentRow>(
      `SELECT a.id, a.state, a.version, a.snapshot FROM actors a WHERE ${where.join(' AND ')} ORDER BY a.created_at DESC, a.id DESC LIMIT $${limit}`,
      params,
    );
    return { rows: rows.slice(0, f.limit), hasMore: rows.length > f.limit };
  }

  /** One of the merchant's own intents in this mode, or null. */
  async payment(merchant: string, mode: Mode, id: string): Promise<PaymentRow | null> {
    const { rows } = await this.db.query<PaymentRow>(
      `SELECT id, state, version, snapshot FROM actors WHERE id = $1 AND kind = 'payment_intent' AND merchant = $2 AND mode = $3`,
      [id, merchant, mode],
    );
    return rows[0] ?? null;
  }

  /** The actor's journal, oldest first (the caller has checked the actor is the merchant's). */
  async journal(actorId: string): Promise<JournalEntry[]> {
    const { rows } = await this.db.query<{ seq: number; type: string; state_before: string | null; state_after: string; at: Date | string }>(
      `SELECT seq, event->>'type' AS type, state_before, state_after, at FROM actor_events WHERE actor_id = $1 ORDER BY seq LIMIT ${TIMELINE_MAX}`,
      [actorId],
    );
    return rows.map((r) => ({ seq: r.seq, type: r.type, state_before: r.state_before, state_after: r.state_after, at: iso(r.at)! }));
  }

  async keys(merchant: string, mode: Mode): Promise<KeyRow[]> {
    const { rows } = await this.db.query<{ id: string; kind: KeyRow['kind']; prefix: string; created_at: Date; revoked_at: Date | null; used: Date | null }>(
      `SELECT k.id, k.kind, k.prefix, k.created_at, k.revoked_at, b.updated_at AS used
         FROM api_keys k LEFT JOIN rate_buckets b ON b.bucket = 'key:' || k.id
        WHERE k.merchant = $1 AND k.mode = $2
        ORDER BY k.revoked_at IS NOT NULL, k.created_at DESC`,
      [merchant, mode],
    );
    return rows.map((r) => ({ id: r.id, kind: r.kind, prefix: r.prefix, created_at: iso(r.created_at)!, revoked_at: iso(r.revoked_at), last_used_at: iso(r.used) }));
  }

  /** The home page's setup checklist for one mode. */
  async setup(merchant: string, mode: Mode): Promise<Setup> {
    const { rows } = await this.db.query<{ address: string | null; verified: boolean | null; url: string | null; keys: number }>(
      `SELECT (SELECT address FROM payout_addresses WHERE merchant = $1 AND mode = $2) AS address,
              (SELECT verified_at IS NOT NULL FROM payout_addresses WHERE merchant = $1 AND mode = $2) AS verified,
              (SELECT url FROM webhook_endpoints WHERE merchant = $1 AND mode = $2 LIMIT 1) AS url,
              (SELECT count(*)::int FROM api_keys WHERE merchant = $1 AND mode = $2 AND kind = 'secret' AND revoked_at IS NULL) AS keys`,
      [merchant, mode],
    );
    const r = rows[0]!;
    return { payout_address: r.address, payout_verified: r.verified === true, webhook_url: r.url, active_secret_keys: r.keys };
  }
}
