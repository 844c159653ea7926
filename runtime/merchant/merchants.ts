/**
 * Merchant accounts, their API keys and payout addresses (the operator API and the bootstrap
 * write here; the gateway reads through `anm_gate_lease`).
 */
import { bytesToHex } from '@noble/hashes/utils.js';
import type { Db, Queryable } from '../../storage/db.ts';
import { generateWallet } from '../chain/codec/keys.ts';
import { normalizeOrigin } from './origins.ts';
import { TerminalError } from '../errors.ts';
import {
  displayPrefix,
  generateApiKey,
  generatePassword,
  hashApiKey,
  hashPassword,
  parseApiKey,
  randomId,
  type KeyKind,
  type Mode,
} from './secrets.ts';

export interface NewMerchant {
  name: string;
  email?: string | undefined;
  password?: string | undefined;
  success_url?: string | null | undefined;
  cancel_url?: string | null | undefined;
  allowed_origins?: string[] | undefined;
  /** Public handle (`[a-z0-9-]{3,40}`); defaults from the name, made unique with the id. */
  handle?: string | undefined;
}

/** Shown once: `anmpay merchant create --json` prints exactly this. */
export interface CreatedMerchant {
  merchant_id: string;
  handle: string;
  dashboard: { email: string; password: string };
  keys: Record<Mode, { secret: string; publishable: string }>;
}

export interface CreatedKey {
  id: string;
  merchant: string;
  mode: Mode;
  kind: KeyKind;
  key: string;
  prefix: string;
}

export class MerchantNotFound extends TerminalError {
  constructor(id: string) {
    super('not_found', `no merchant ${id}`);
  }
}

export class MerchantConflict extends TerminalError {
  constructor(message: string) {
    super('conflict', message);
  }
}

const MODES: readonly Mode[] = ['test', 'live'];

export const HANDLE_PATTERN = /^[a-z0-9-]{3,40}$/;

function slug(name: string): string {
  return (
    name
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 40) || 'merchant'
  );
}

export class Merchants {
  constructor(
    private readonly db: Db,
    private readonly pepper: Buffer,
  ) {}

  /**
   * A merchant with a dashboard login, a secret and a publishable key per mode, and a test
   * payout address whose key the service holds (test mode never moves real ANM).
   */
  async create(input: NewMerchant): Promise<CreatedMerchant> {
    return this.db.tx((q) => this.createIn(q, input));
  }

  /** `create` inside the caller's transaction (the bootstrap holds a lock around it). */
  async createIn(q: Queryable, input: NewMerchant): Promise<CreatedMerchant> {
    const id = randomId('mer_', 10);
    const email = input.email ?? `${slug(input.name)}-${id.slice(4, 10)}@merchants.anmpay.local`;
    const password = input.password ?? generatePassword();
    const clash = await q.query(`SELECT 1 FROM merchants WHERE email = $1`, [email]);
    if (clash.rowCount > 0) throw new MerchantConflict(`a merchant with email ${email} exists`);
    const handle = await this.freeHandle(q, id, input);
    const wallet = generateWallet('test');
    await q.query(
      `INSERT INTO merchants (id, name, email, password_hash, allowed_origins, success_url, cancel_url, handle)
       VALUES ($1, $2, $3, $4, $5::jsonb, $6, $7, $8)`,
      [id, input.name, email, await hashPassword(password), JSON.stringify([...new Set((input.allowed_origins ?? []).map(normalizeOrigin))]), input.success_url ?? null, input.cancel_url ?? null, handle],
    );
    await q.query(`INSERT INTO payout_addresses (merchant, mode, address, wallet_secret, verified_at) VALUES ($1, 'test', $2, $3, now())`, [
      id,
      wallet.address,
      bytesToHex(wallet.secretKey),
    ]);
    wallet.secretKey.fill(0);
    const keys = {} as CreatedMerchant['keys'];
    for (const mode of MODES) {
      const secret = await this.insertKey(q, id, mode, 'secret');
      const publishable = await this.insertKey(q, id, mode, 'publishable');
      keys[mode] = { secret: secret.key, publishable: publishable.key };
    }
    return { merchant_id: id, handle, dashboard: { email, password }, keys };
  }

  /** The asked-for handle (a conflict if taken), or the name's slug, suffixed with the id when taken. */
  private async freeHandle(q: Queryable, id: string, input: NewMerchant): Promise<string> {
    const taken = async (h: string) => (await q.query(`SELECT 1 FROM merchants WHERE handle = $1`, [h])).rowCount > 0;
    if (input.handle !== undefined) {
      if (!HANDLE_PATTERN.test(input.handle)) throw new MerchantConflict(`handle must match ${HANDLE_PATTERN.source}`);
      if (await taken(input.handle)) throw new MerchantConflict(`the handle ${input.handle} is taken`);
      return input.handle;
    }
    const base = slug(input.name).slice(0, 33).replace(/-+$/, '').padEnd(3, '0');
    return (await taken(base)) ? `${base}-${id.slice(4, 10)}` : base;
  }

  async createKey(merchant: string, mode: Mode, kind: KeyKind): Promise<CreatedKey> {
    return this.db.tx(async (q) => {
      const found = await q.query(`SELECT 1 FROM merchants WHERE id = $1`, [merchant]);
      if (found.rowCount === 0) throw new MerchantNotFound(merchant);
      return this.insertKey(q, merchant, mode, kind);
    });
  }

  private async insertKey(q: Queryable, merchant: string, mode: Mode, kind: KeyKind): Promise<CreatedKey> {
    const key = generateApiKey(kind, mode);
    const id = randomId('key_', 10);
    await q.query(`INSERT INTO api_keys (id, merchant, mode, kind, prefix, hash) VALUES ($1, $2, $3, $4, $5, $6)`, [
      id,
      merchant,
      mode,
      kind,
      displayPrefix(key),
      hashApiKey(this.pepper, key),
    ]);
    return { id, merchant, mode, kind, key, prefix: displayPrefix(key) };
  }

  /** Revokes by key id or by the key itself; null when there is no such key. */
  async revokeKey(idOrKey: string): Promise<{ id: string; revoked_at: string } | null> {
    const byKey = parseApiKey(idOrKey) !== undefined;
    const { rows } = await this.db.query<{ id: string; revoked_at: Date | string }>(
      `UPDATE api_keys SET revoked_at = coalesce(revoked_at, now()) WHERE ${byKey ? 'hash' : 'id'} = $1 RETURNING id, revoked_at`,
      [byKey ? hashApiKey(this.pepper, idOrKey) : idOrKey],
    );
    const row = rows[0];
    return row ? { id: row.id, revoked_at: new Date(row.revoked_at).toISOString() } : null;
  }

  /** Revokes one of the merchant's own keys by id; null when it has no such key. */
  async revokeOwnKey(merchant: string, id: string): Promise<{ id: string; revoked_at: string } | null> {
    const { rows } = await this.db.query<{ id: string; revoked_at: Date | string }>(
      `UPDATE api_keys SET revoked_at = coalesce(revoked_at, now()) WHERE id = $1 AND merchant = $2 RETURNING id, revoked_at`,
      [id, merchant],
    );
    const row = rows[0];
    return row ? { id: row.id, revoked_at: new Date(row.revoked_at).toISOString() } : null;
  }

  async setStatus(merchant: string, status: 'active' | 'suspended'): Promise<boolean> {
    const res = await this.db.query(`UPDATE merchants SET status = $2 WHERE id = $1 RETURNING id`, [merchant, status]);
    return res.rowCount > 0;
  }

  /** Sets a payout address (live addresses are the merchant's own: no secret is kept). */
  async setPayoutAddress(merchant: string, mode: Mode, address: string): Promise<void> {
    await this.db.query(
      `INSERT INTO payout_addresses (merchant, mode, address) VALUES ($1, $2, $3)
       ON CONFLICT (merchant, mode) DO UPDATE SET address = EXCLUDED.address, wallet_secret = NULL, verified_at = NULL`,
      [merchant, mode, address],
    );
  }

  /**
   * Replaces the origins allowed to frame this merchant's checkout (`/c/{id}?embed=1`); they
   * become its `frame-ancestors`. Returns the stored list, or null when there is no such merchant.
   */
  async setAllowedOrigins(merchant: string, origins: readonly string[]): Promise<string[] | null> {
    const normalized = [...new Set(origins.map(normalizeOrigin))];
    const res = await this.db.query(`UPDATE merchants SET allowed_origins = $2::jsonb WHERE id = $1 RETURNING id`, [merchant, JSON.stringify(normalized)]);
    return res.rowCount > 0 ? normalized : null;
  }

  async count(): Promise<number> {
    const { rows } = await this.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM merchants`);
    return rows[0]?.n ?? 0;
  }
}
