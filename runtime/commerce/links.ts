/**
 * What the payment-link surfaces read (DESIGN §7 "Payment links"): a link's snapshot by id,
 * by its merchant's handle and slug, or by its short code, with what a public page needs of
 * its merchant (name, status, payout address and redirect URLs of the link's mode); a
 * merchant's links by page; a link's recent holds. Nothing here writes domain state (a press
 * of Pay writes only its rate bucket), and no unit is counted here: the counts are the link
 * actor's.
 */
import type { PersistedSnapshot } from '../../machines/kit/step.ts';
import type { Db } from '../../storage/db.ts';
import type { Mode } from '../merchant/secrets.ts';

export interface LinkRow {
  id: string;
  state: string;
  snapshot: PersistedSnapshot;
  merchant: string;
  mode: Mode;
  handle: string;
}

/** A link as a public page finds it, with its merchant's side of the intent it starts. */
export interface PublicLink extends LinkRow {
  merchant_name: string;
  merchant_status: string;
  payout_address: string | null;
  success_url: string | null;
  cancel_url: string | null;
}

/** A press of Pay: the link, and whether the buyer's bucket for it had a token. */
export interface PayPress {
  link: PublicLink;
  allowed: boolean;
  /** Seconds until the bucket holds a token again (0 when allowed). */
  retryAfter: number;
}

/** What the product page shows: the link's snapshot (null when the caller's copy is current) and its merchant's name. */
export interface LinkPageRow {
  id: string;
  version: number;
  state: string;
  snapshot: PersistedSnapshot | null;
  mode: Mode;
  merchant_name: string;
}

export interface HoldRow {
  id: string;
  state: string;
  snapshot: PersistedSnapshot;
}

const LINK_COLUMNS = `a.id, a.state, a.snapshot, p.merchant, p.mode, m.handle`;

const PUBLIC_SQL = `SELECT ${LINK_COLUMNS}, m.name AS merchant_name, m.status AS merchant_status, pa.address AS payout_address, m.success_url, m.cancel_url
  FROM payment_links p JOIN merchants m ON m.id = p.merchant JOIN actors a ON a.id = p.id
  LEFT JOIN payout_addresses pa ON pa.merchant = p.merchant AND pa.mode = p.mode`;

/**
 * The press's lookup and its token in one statement. The buyer's bucket (`pay:<link> <ip>`) is
 * a row of the shared `rate_buckets` (ADR 0004), so every gateway process on the database
 * counts the same presses; an inactive or unknown link takes no token. A refused press leaves
 * the bucket as refilled: hammering does not push a buyer further into debt.
 */
const PRESS_SQL = `WITH l AS (${PUBLIC_SQL} WHERE m.handle = $1 AND p.slug = $2),
  t AS (
    INSERT INTO rate_buckets AS b (bucket, tokens, taken, updated_at)
    SELECT 'pay:' || l.id || ' ' || $3::text, $4::float8 - 1, true, now() FROM l WHERE l.state = 'ACTIVE'
    ON CONFLICT (bucket) DO UPDATE SET
      tokens = CASE WHEN anm_refill(b.tokens, b.updated_at, now(), $4::float8, $5::float8) >= 1
                    THEN anm_refill(b.tokens, b.updated_at, now(), $4::float8, $5::float8) - 1
                    ELSE anm_refill(b.tokens, b.updated_at, now(), $4::float8, $5::float8) END,
      taken = anm_refill(b.tokens, b.updated_at, now(), $4::float8, $5::float8) >= 1,
      updated_at = greatest(b.updated_at, now())
    RETURNING b.taken, b.tokens)
  SELECT l.*, t.taken AS pay_ok, t.tokens AS pay_tokens FROM l LEFT JOIN t ON true`;

export class LinkReads {
  constructor(private readonly db: Db) {}

  /** The page behind `/p/{handle}/{slug}`, or null. */
  async byHandle(handle: string, slug: string): Promise<PublicLink | null> {
    const r = await this.db.query<PublicLink>(`${PUBLIC_SQL} WHERE m.handle = $1 AND p.slug = $2`, [handle, slug]);
    return r.rows[0] ?? null;
  }

  /**
   * The product page's read: the link's version on every call, its snapshot only when it is
   * not the version the caller already rendered (`known`).
   */
  async page(handle: string, slug: string, known?: { id: string; version: number }): Promise<LinkPageRow | null> {
    const r = await this.db.query<LinkPageRow>(
      `SELECT a.id, a.version, a.state, CASE WHEN a.id = $3 AND a.version = $4 THEN NULL ELSE a.snapshot END AS snapshot, p.mode, m.name AS merchant_name
         FROM payment_links p JOIN merchants m ON m.id = p.merchant JOIN actors a ON a.id = p.id
        WHERE m.handle = $1 AND p.slug = $2`,
      [handle, slug, known?.id ?? null, known?.version ?? null],
    );
    return r.rows[0] ?? null;
  }

  /** The merchant's public handle (the `/p/{handle}/…` of its links). */
  async handleOf(merchant: string): Promise<string> {
    const r = await this.db.query<{ handle: string }>(`SELECT handle FROM merchants WHERE id = $1`, [merchant]);
    return r.rows[0]?.handle ?? '';
  }

  /**
   * A buyer at `ip` pressing Pay on `/p/{handle}/{slug}`: the link (null when unknown) and one
   * token from the buyer's bucket for it, `perMinute` a minute with as much burst.
   */
  async press(handle: string, slug: string, ip: string, perMinute: number): Promise<PayPress | null> {
    const r = await this.db.query<PublicLink & { pay_ok: boolean | null; pay_tokens: number | null }>(PRESS_SQL, [handle, slug, ip, perMinute, perMinute / 60]);
    const row = r.rows[0];
    if (!row) return null;
    const { pay_ok, pay_tokens, ...link } = row;
    const allowed = pay_ok !== false;
    const retryAfter = allowed ? 0 : Math.max(1, Math.ceil((1 - (pay_tokens ?? 0)) / (perMinute / 60)));
    return { link, allowed, retryAfter };
  }

  /** Where `/l/{code}` points, or null: an inactive link's short link is a 404 like its page (DESIGN §7), not a redirect to one. */
  async byCode(code: string): Promise<{ handle: string; slug: string } | null> {
    const r = await this.db.query<{ handle: string; slug: string }>(
      `SELECT m.handle, p.slug FROM payment_links p JOIN merchants m ON m.id = p.merchant JOIN actors a ON a.id = p.id WHERE p.code = $1 AND a.state = 'ACTIVE'`,
      [code],
    );
    return r.rows[0] ?? null;
  }

  /** One link of this merchant and mode; another's reads as absent (spec rule 11). */
  async own(merchant: string, mode: Mode, id: string): Promise<PublicLink | null> {
    const r = await this.db.query<PublicLink>(`${PUBLIC_SQL} WHERE p.id = $1 AND p.merchant = $2 AND p.mode = $3`, [id, merchant, mode]);
    return r.rows[0] ?? null;
  }

  /** Newest first; `after` is the id of the last link of the previous page (null: unknown cursor). */
  async list(merchant: string, mode: Mode, limit: number, after?: string): Promise<{ rows: LinkRow[]; hasMore: boolean } | null> {
    let cursor: { created_at: Date } | undefined;
    if (after !== undefined) {
      const c = await this.db.query<{ created_at: Date }>(`SELECT created_at FROM payment_links WHERE id = $1 AND merchant = $2 AND mode = $3`, [after, merchant, mode]);
      cursor = c.rows[0];
      if (!cursor) return null;
    }
    const r = await this.db.query<LinkRow>(
      `SELECT ${LINK_COLUMNS} FROM payment_links p JOIN merchants m ON m.id = p.merchant JOIN actors a ON a.id = p.id
        WHERE p.merchant = $1 AND p.mode = $2 ${cursor ? 'AND (p.created_at, p.id) < ($4, $5)' : ''}
        ORDER BY p.created_at DESC, p.id DESC LIMIT $3`,
      cursor ? [merchant, mode, limit + 1, cursor.created_at, after!] : [merchant, mode, limit + 1],
    );
    return { rows: r.rows.slice(0, limit), hasMore: r.rows.length > limit };
  }

  /** A link's most recent holds (the dashboard's list; the counts are the link's own). */
  async holds(linkId: string, limit: number): Promise<HoldRow[]> {
    const r = await this.db.query<HoldRow>(
      `SELECT a.id, a.state, a.snapshot FROM payment_link_holds h JOIN actors a ON a.id = h.hold_id
        WHERE h.link_id = $1 ORDER BY h.created_at DESC, h.hold_id DESC LIMIT $2`,
      [linkId, limit],
    );
    return r.rows;
  }
}
