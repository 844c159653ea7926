import { randomBytes } from 'node:crypto';
import type { Db, Queryable } from '../../storage/db.ts';
import { WebhookError } from './errors.ts';
import { newSecret } from './signing.ts';
import { validateWebhookUrl, type LookupAll } from './url-policy.ts';

/** Endpoints and their signing secrets: one endpoint per merchant and mode (ADR 0009). */

export type Mode = 'live' | 'test';
export const DEFAULT_ROTATION_GRACE_MS = 24 * 3600_000;

export interface EndpointPolicy {
  allowPrivate: boolean;
  lookupAll?: LookupAll;
}

/** What `set` and `rotate` answer; `secret` is the only time a secret leaves the service. */
export interface EndpointSecretView {
  endpoint_id: string;
  url: string;
  /** The new secret; null when `set` only changed the URL of an existing endpoint. */
  secret: string | null;
  mode: Mode;
  status: 'active' | 'disabled';
  created: boolean;
}

export interface EndpointView {
  endpoint_id: string;
  merchant: string;
  mode: Mode;
  url: string;
  status: 'active' | 'disabled';
  disabled_reason: string | null;
  created_at: string;
  updated_at: string;
  /** Signing secrets in force (never their values): the current one and any in their grace. */
  secrets: Array<{ created_at: string; expires_at: string | null }>;
}

interface EndpointRow {
  id: string;
  merchant: string;
  mode: Mode;
  url: string;
  status: 'active' | 'disabled';
  disabled_reason: string | null;
  created_at: Date | string;
  updated_at: Date | string;
}

const iso = (v: Date | string | null): string | null => (v === null ? null : new Date(v).toISOString());

export function assertMode(mode: unknown): Mode {
  if (mode !== 'live' && mode !== 'test') throw new WebhookError('invalid_body', 'mode must be "live" or "test"');
  return mode;
}

export function assertMerchant(merchant: unknown): string {
  if (typeof merchant !== 'string' || !/^[A-Za-z0-9_-]{1,64}$/.test(merchant)) throw new WebhookError('invalid_body', 'merchant must be an id of 1-64 letters, digits, _ or -');
  return merchant;
}

/**
 * Creates the endpoint with a fresh secret, or points the existing one at a new URL (and
 * re-enables it if a 410 had disabled it). The secret of an existing endpoint is kept: a
 * URL change must not break verification; `rotate` issues a new one.
 */
export async function setEndpoint(db: Db, input: { merchant: string; mode: Mode; url: string }, policy: EndpointPolicy): Promise<EndpointSecretView> {
  const merchant = assertMerchant(input.merchant);
  const mode = assertMode(input.mode);
  const url = (await validateWebhookUrl(input.url, policy)).toString();
  return db.tx(async (q) => {
    const existing = await lockEndpoint(q, merchant, mode);
    if (existing) {
      await q.query(`UPDATE webhook_endpoints SET url = $2, status = 'active', disabled_reason = NULL, updated_at = now() WHERE id = $1`, [existing.id, url]);
      return { endpoint_id: existing.id, url, secret: null, mode, status: 'active' as const, created: false };
    }
    const id = `we_${randomBytes(12).toString('hex')}`;
    const secret = newSecret();
    const ins = await q.query(
      `INSERT INTO webhook_endpoints (id, merchant, mode, url, status) VALUES ($1, $2, $3, $4, 'active') ON CONFLICT (merchant, mode) DO NOTHING`,
      [id, merchant, mode, url],
    );
    // Lost a race with another `set`: that one created it; this one becomes a URL update.
    if (ins.rowCount === 0) throw new RetrySet();
    await q.query(`INSERT INTO webhook_secrets (endpoint, secret) VALUES ($1, $2)`, [id, secret]);
    return { endpoint_id: id, url, secret, mode, status: 'active' as const, created: true };
  }).catch((err: unknown) => {
    if (err instanceof RetrySet) return setEndpoint(db, input, policy);
    throw err;
  });
}

class RetrySet extends Error {}

async function lockEndpoint(q: Queryable, merchant: string, mode: Mode): Promise<EndpointRow | undefined> {
  const { rows } = await q.query<EndpointRow>(`SELECT * FROM webhook_endpoints WHERE merchant = $1 AND mode = $2 FOR UPDATE`, [merchant, mode]);
  return rows[0];
}

/**
 * Issues a new secret; the ones in force keep signing until `graceMs` from now, so receivers
 * can switch over without dropping a delivery (one `v1=` entry per active secret).
 */
export async function rotateSecret(db: Db, input: { merchant: string; mode: Mode; graceMs?: number }, now = Date.now()): Promise<EndpointSecretView & { previous_secrets_expire_at: string }> {
  const merchant = assertMerchant(input.merchant);
  const mode = assertMode(input.mode);
  const graceMs = input.graceMs ?? DEFAULT_ROTATION_GRACE_MS;
  if (!Number.isFinite(graceMs) || graceMs < 0 || graceMs > 7 * 24 * 3600_000) throw new WebhookError('invalid_body', 'grace must be between 0 and 7 days');
  return db.tx(async (q) => {
    const ep = await lockEndpoint(q, merchant, mode);
    if (!ep) throw new WebhookError('not_found', `no ${mode} webhook endpoint for this merchant`);
    const expires = new Date(now + graceMs);
    await q.query(
      `UPDATE webhook_secrets SET expires_at = $2 WHERE endpoint = $1 AND (expires_at IS NULL OR expires_at > $2)`,
      [ep.id, expires],
    );
    const secret = newSecret();
    await q.query(`INSERT INTO webhook_secrets (endpoint, secret, created_at) VALUES ($1, $2, $3)`, [ep.id, secret, new Date(now)]);
    return { endpoint_id: ep.id, url: ep.url, secret, mode, status: ep.status, created: false, previous_secrets_expire_at: expires.toISOString() };
  });
}

export async function listEndpoints(db: Db, merchant: string, now = Date.now()): Promise<EndpointView[]> {
  assertMerchant(merchant);
  const { rows } = await db.query<EndpointRow & { secrets: Array<{ created_at: string; expires_at: string | null }> | null }>(
    `SELECT e.*, (SELECT json_agg(json_build_object('created_at', s.created_at, 'expires_at', s.expires_at) ORDER BY s.created_at DESC, s.id DESC)
                    FROM webhook_secrets s WHERE s.endpoint = e.id AND (s.expires_at IS NULL OR s.expires_at > $2)) AS secrets
       FROM webhook_endpoints e WHERE e.merchant = $1 ORDER BY e.mode`,
    [merchant, new Date(now)],
  );
  return rows.map((r) => ({
    endpoint_id: r.id,
    merchant: r.merchant,
    mode: r.mode,
    url: r.url,
    status: r.status,
    disabled_reason: r.disabled_reason,
    created_at: iso(r.created_at)!,
    updated_at: iso(r.updated_at)!,
    secrets: (r.secrets ?? []).map((s) => ({ created_at: iso(s.created_at)!, expires_at: iso(s.expires_at) })),
  }));
}

/** Secrets that sign a delivery made at `now`, newest first. */
export async function activeSecrets(q: Queryable, endpoint: string, now = Date.now()): Promise<string[]> {
  const { rows } = await q.query<{ secret: string }>(
    `SELECT secret FROM webhook_secrets WHERE endpoint = $1 AND (expires_at IS NULL OR expires_at > $2) ORDER BY created_at DESC, id DESC`,
    [endpoint, new Date(now)],
  );
  return rows.map((r) => r.secret);
}
