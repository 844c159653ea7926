/**
 * Server-side sessions of the browser surfaces (dashboard, operator console), DESIGN §7. The
 * cookie holds a random token; the table holds its SHA-256, the principal, the CSRF secret and
 * a little page state (`data`, e.g. the dashboard's mode). A session dies after `idleMs`
 * without a request, or when revoked; a visitor's session (no principal yet) exists only to
 * carry the login form's CSRF secret and is replaced on login.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Db } from '../../storage/db.ts';
import { randomId } from '../merchant/secrets.ts';

export type SessionKind = 'merchant' | 'operator';

export interface Session {
  /** Public id (`ses_…`): listed on the account page, used to revoke one session. */
  id: string;
  kind: SessionKind;
  /** Merchant id or operator name; null before login. */
  principal: string | null;
  csrfSecret: string;
  data: Record<string, unknown>;
  ip: string | null;
  userAgent: string | null;
  createdAt: string;
  lastSeenAt: string;
}

export interface NewSession {
  kind: SessionKind;
  principal: string | null;
  csrfSecret: string;
  data?: Record<string, unknown>;
  ip?: string | null;
  userAgent?: string | null;
}

/** DESIGN §7: 12 hours without a request ends a session. */
export const SESSION_IDLE_MS = 12 * 60 * 60 * 1000;
// last_seen_at is written at most this often per session, so reading pages costs no writes.
const TOUCH_EVERY_S = 60;

type Row = {
  id: string;
  kind: SessionKind;
  principal: string | null;
  csrf_secret: string;
  data: Record<string, unknown>;
  ip: string | null;
  user_agent: string | null;
  created_at: Date | string;
  last_seen_at: Date | string;
};

const COLUMNS = 'id, kind, principal, csrf_secret, data, ip, user_agent, created_at, last_seen_at';

function toSession(r: Row): Session {
  return {
    id: r.id,
    kind: r.kind,
    principal: r.principal,
    csrfSecret: r.csrf_secret,
    data: r.data ?? {},
    ip: r.ip,
    userAgent: r.user_agent,
    createdAt: new Date(r.created_at).toISOString(),
    lastSeenAt: new Date(r.last_seen_at).toISOString(),
  };
}

export function tokenHash(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

export class SessionStore {
  constructor(
    private readonly db: Db,
    readonly idleMs = SESSION_IDLE_MS,
  ) {}

  /** A new session and its cookie token (256 random bits, base64url); the token is not stored. */
  async create(s: NewSession): Promise<{ token: string; session: Session }> {
    const token = randomBytes(32).toString('base64url');
    const { rows } = await this.db.query<Row>(
      `INSERT INTO sessions (token_hash, id, kind, principal, csrf_secret, data, ip, user_agent)
       VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7, $8) RETURNING ${COLUMNS}`,
      [tokenHash(token), randomId('ses_'), s.kind, s.principal, s.csrfSecret, JSON.stringify(s.data ?? {}), s.ip ?? null, (s.userAgent ?? '').slice(0, 300) || null],
    );
    return { token, session: toSession(rows[0]!) };
  }

  /**
   * The live session of this kind for a cookie token, or null (unknown, revoked, idle too
   * long). Marks it seen, at most once a minute, in the same statement.
   */
  async lookup(kind: SessionKind, token: string): Promise<Session | null> {
    const { rows } = await this.db.query<Row>(
      `WITH s AS (
         SELECT token_hash, ${COLUMNS} FROM sessions
          WHERE token_hash = $1 AND kind = $2 AND last_seen_at > now() - make_interval(secs => $3::double precision / 1000)
       ), touched AS (
         UPDATE sessions x SET last_seen_at = now() FROM s
          WHERE x.token_hash = s.token_hash AND s.last_seen_at < now() - make_interval(secs => ${TOUCH_EVERY_S})
       )
       SELECT ${COLUMNS} FROM s`,
      [tokenHash(token), kind, this.idleMs],
    );
    return rows[0] ? toSession(rows[0]) : null;
  }

  /** Ends the session of this cookie token (logout). */
  async revokeToken(token: string): Promise<void> {
    await this.db.query(`DELETE FROM sessions WHERE token_hash = $1`, [tokenHash(token)]);
  }

  /** Ends one session of a principal by its public id; false when it is not theirs or gone. */
  async revokeId(kind: SessionKind, principal: string, id: string): Promise<boolean> {
    const res = await this.db.query(`DELETE FROM sessions WHERE id = $1 AND kind = $2 AND principal = $3`, [id, kind, principal]);
    return res.rowCount > 0;
  }

  /** Ends every session of a principal but `keepId` (after a password change). */
  async revokeAll(kind: SessionKind, principal: string, keepId: string | null = null): Promise<number> {
    const res = await this.db.query(`DELETE FROM sessions WHERE kind = $1 AND principal = $2 AND id IS DISTINCT FROM $3`, [kind, principal, keepId]);
    return res.rowCount;
  }

  /** Live sessions of a principal, most recently seen first. */
  async list(kind: SessionKind, principal: string): Promise<Session[]> {
    const { rows } = await this.db.query<Row>(
      `SELECT ${COLUMNS} FROM sessions
        WHERE kind = $1 AND principal = $2 AND last_seen_at > now() - make_interval(secs => $3::double precision / 1000)
        ORDER BY last_seen_at DESC LIMIT 100`,
      [kind, principal, this.idleMs],
    );
    return rows.map(toSession);
  }

  /** Merges `patch` into the session's page state (e.g. `{ mode: 'live' }`). */
  async setData(id: string, patch: Record<string, unknown>): Promise<void> {
    await this.db.query(`UPDATE sessions SET data = data || $2::jsonb WHERE id = $1`, [id, JSON.stringify(patch)]);
  }

  /**
   * Deletes sessions idle past the limit, and visitors' sessions (a login form never sent)
   * after an hour, so form views cannot pile rows up; returns how many.
   */
  async sweep(): Promise<number> {
    const res = await this.db.query(
      `DELETE FROM sessions WHERE last_seen_at <= now() - make_interval(secs => $1::double precision / 1000)
          OR (principal IS NULL AND last_seen_at <= now() - interval '1 hour')`,
      [this.idleMs],
    );
    return res.rowCount;
  }
}
