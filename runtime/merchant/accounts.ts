/**
 * Dashboard logins of merchants (DESIGN §7): email + scrypt password as `Merchants.create`
 * stored them, password change, and the profile a dashboard page shows.
 */
import type { Db } from '../../storage/db.ts';
import { TerminalError } from '../errors.ts';
import { hashPassword, verifyPassword } from './secrets.ts';

export interface MerchantProfile {
  id: string;
  name: string;
  email: string;
  handle: string;
  status: 'active' | 'suspended';
  allowed_origins: string[];
}

export class WrongPassword extends TerminalError {
  constructor() {
    // A 400, not a 401: the session is fine, the form is not.
    super('invalid_body', 'The current password is wrong.');
  }
}

/** A password a person chose: 12 to 200 characters (the operator API's rule). */
export const PASSWORD_MIN = 12;
export const PASSWORD_MAX = 200;

// Compared against when the email is unknown, so a miss costs the same scrypt as a hit.
const DUMMY_HASH = hashPassword('not a real password, only timing');

export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

export class Accounts {
  constructor(private readonly db: Db) {}

  /** The merchant whose email and password these are, or null (same time either way). */
  async verify(email: string, password: string): Promise<MerchantProfile | null> {
    const { rows } = await this.db.query<MerchantProfile & { password_hash: string }>(
      `SELECT id, name, email, handle, status, allowed_origins, password_hash FROM merchants WHERE lower(email) = $1`,
      [normalizeEmail(email)],
    );
    const row = rows[0];
    const ok = await verifyPassword(password, row?.password_hash ?? (await DUMMY_HASH));
    if (!row || !ok) return null;
    const { password_hash: _drop, ...profile } = row;
    return profile;
  }

  async profile(id: string): Promise<MerchantProfile | null> {
    const { rows } = await this.db.query<MerchantProfile>(`SELECT id, name, email, handle, status, allowed_origins FROM merchants WHERE id = $1`, [id]);
    return rows[0] ?? null;
  }

  /** Replaces the password after checking the current one. */
  async changePassword(id: string, current: string, next: string): Promise<void> {
    const { rows } = await this.db.query<{ password_hash: string }>(`SELECT password_hash FROM merchants WHERE id = $1`, [id]);
    if (!rows[0] || !(await verifyPassword(current, rows[0].password_hash))) throw new WrongPassword();
    await this.db.query(`UPDATE merchants SET password_hash = $2 WHERE id = $1`, [id, await hashPassword(next)]);
  }
}
