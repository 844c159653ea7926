/**
 * The shop directory and storefronts (DESIGN §7 "Shop"): merchants that opted in, are active,
 * and have a verified live payout address; a storefront is such a merchant's active live
 * payment links. Read from the link actors' snapshots through the link index; the opt-in is
 * the merchant's own setting.
 */
import type { Db } from '../../storage/db.ts';
import type { LinkRow } from './links.ts';

export interface ShopEntry {
  handle: string;
  name: string;
  description: string;
  /** Active live payment links. */
  links: number;
}

export interface ShopSetting {
  listed: boolean;
  description: string;
  /** Whether the directory shows it now: opted in and a verified live payout address. */
  visible: boolean;
}

/** The most merchants one directory page lists. */
export const DIRECTORY_MAX = 100;

const VISIBLE = `m.shop_listed AND m.status = 'active'
  AND EXISTS (SELECT 1 FROM payout_addresses pa WHERE pa.merchant = m.id AND pa.mode = 'live' AND pa.verified_at IS NOT NULL)`;

const ACTIVE_LIVE_LINKS = `FROM payment_links p JOIN actors a ON a.id = p.id WHERE p.merchant = m.id AND p.mode = 'live' AND a.state = 'ACTIVE'`;

/** `%`, `_` and `\` in a name search are literal. */
const likeEscape = (s: string): string => s.replace(/[\\%_]/g, (c) => `\\${c}`);

export class ShopReads {
  constructor(private readonly db: Db) {}

  /** Listed merchants by name, those whose name contains `q` (any case) when given. */
  async directory(q: string): Promise<ShopEntry[]> {
    const { rows } = await this.db.query<ShopEntry>(
      `SELECT m.handle, m.name, m.shop_description AS description, (SELECT count(*) ${ACTIVE_LIVE_LINKS})::int AS links
         FROM merchants m WHERE ${VISIBLE} AND ($1 = '' OR m.name ILIKE '%' || $1 || '%')
        ORDER BY lower(m.name), m.handle LIMIT ${DIRECTORY_MAX}`,
      [likeEscape(q)],
    );
    return rows;
  }

  /** A listed merchant's storefront: its entry and its active live links, newest first; or null. */
  async storefront(handle: string): Promise<{ shop: ShopEntry; links: LinkRow[] } | null> {
    const m = await this.db.query<ShopEntry & { id: string }>(
      `SELECT m.id, m.handle, m.name, m.shop_description AS description, (SELECT count(*) ${ACTIVE_LIVE_LINKS})::int AS links
         FROM merchants m WHERE m.handle = $1 AND ${VISIBLE}`,
      [handle],
    );
    const row = m.rows[0];
    if (!row) return null;
    const links = await this.db.query<LinkRow>(
      `SELECT a.id, a.state, a.snapshot, p.merchant, p.mode, $2::text AS handle ${ACTIVE_LIVE_LINKS.replace('m.id', '$1')} ORDER BY p.created_at DESC, p.id DESC LIMIT 200`,
      [row.id, row.handle],
    );
    const { id: _id, ...shop } = row;
    return { shop, links: links.rows };
  }

  async setting(merchant: string): Promise<ShopSetting> {
    const { rows } = await this.db.query<ShopSetting>(
      `SELECT m.shop_listed AS listed, m.shop_description AS description, (${VISIBLE}) AS visible FROM merchants m WHERE m.id = $1`,
      [merchant],
    );
    return rows[0] ?? { listed: false, description: '', visible: false };
  }

  async set(merchant: string, s: { listed: boolean; description: string }): Promise<ShopSetting> {
    await this.db.query(`UPDATE merchants SET shop_listed = $2, shop_description = $3 WHERE id = $1`, [merchant, s.listed, s.description]);
    return this.setting(merchant);
  }
}
