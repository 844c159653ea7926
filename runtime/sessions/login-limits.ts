/**
 * Failed-login lockout (DESIGN §7): 5 failures per account and per client address in 15
 * minutes, then logins are refused until the oldest failure of the window ages out. Counted
 * in PostgreSQL so every gateway process sees the same count.
 */
import type { Db } from '../../storage/db.ts';
import type { SessionKind } from './store.ts';

export const LOGIN_FAILURES_ALLOWED = 5;
export const LOGIN_WINDOW_MS = 15 * 60 * 1000;

export interface LoginSubject {
  kind: SessionKind;
  /** The email (lower-cased) or operator name tried. */
  account: string;
  ip: string;
}

/** Refused while locked: seconds until the next attempt may be tried. */
export type LockState = { locked: false } | { locked: true; retryAfterS: number };

export class LoginLimits {
  constructor(
    private readonly db: Db,
    private readonly allowed = LOGIN_FAILURES_ALLOWED,
    private readonly windowMs = LOGIN_WINDOW_MS,
  ) {}

  /** Whether the account or the address has used up its failures in the window. */
  async check(s: LoginSubject): Promise<LockState> {
    const { rows } = await this.db.query<{ scope: string; n: number; wait_s: number }>(
      `SELECT scope, count(*)::int AS n,
              ceil(extract(epoch FROM min(at) + make_interval(secs => $4::double precision / 1000) - now()))::int AS wait_s
         FROM login_failures
        WHERE kind = $1 AND ((scope = 'account' AND subject = $2) OR (scope = 'ip' AND subject = $3))
          AND at > now() - make_interval(secs => $4::double precision / 1000)
        GROUP BY scope`,
      [s.kind, s.account, s.ip, this.windowMs],
    );
    const hit = rows.filter((r) => r.n >= this.allowed);
    if (hit.length === 0) return { locked: false };
    return { locked: true, retryAfterS: Math.max(1, ...hit.map((r) => r.wait_s)) };
  }

  /** Records a failure against both the account and the address. */
  async fail(s: LoginSubject): Promise<void> {
    await this.db.query(
      `WITH gone AS (DELETE FROM login_failures WHERE at <= now() - make_interval(secs => $4::double precision / 1000))
       INSERT INTO login_failures (kind, scope, subject) VALUES ($1, 'account', $2), ($1, 'ip', $3)`,
      [s.kind, s.account, s.ip, this.windowMs],
    );
  }

  /** A successful login clears the account's failures (not the address's). */
  async succeed(s: LoginSubject): Promise<void> {
    await this.db.query(`DELETE FROM login_failures WHERE kind = $1 AND scope = 'account' AND subject = $2`, [s.kind, s.account]);
  }
}
