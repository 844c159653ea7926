/**
 * Reads behind the hosted checkout (`/c/{id}`, its event stream, `/widget.js` embeds): one
 * round trip gives the intent's snapshot and version, its merchant's display name and allowed
 * origins, and optionally whether a publishable key belongs to that merchant and mode. The
 * unguessable intent id is the capability (spec Authentication 8). Nothing here writes.
 */
import type { Db } from '../../storage/db.ts';
import type { PersistedSnapshot } from '../../machines/kit/step.ts';

export interface CheckoutRow {
  id: string;
  state: string;
  version: number;
  snapshot: PersistedSnapshot;
  merchantName: string;
  /** The intent's mode: a live intent never honours a loopback `*` origin. */
  mode: 'test' | 'live';
  /** Origins the merchant allows to frame its checkout (`embed=1`). */
  allowedOrigins: string[];
  /** Null when no key was asked about; else whether it is an active publishable key of this merchant and mode. */
  keyMatches: boolean | null;
}

interface Raw {
  id: string;
  state: string;
  version: number;
  snapshot: PersistedSnapshot;
  mode: string;
  name: string | null;
  allowed_origins: unknown;
  key_matches: boolean | null;
}

export class CheckoutReads {
  constructor(private readonly db: Db) {}

  /** `publishableKeyHash`: keyed hash of an `apk_` key to check against the intent's merchant and mode. */
  async byId(id: string, publishableKeyHash: string | null = null): Promise<CheckoutRow | null> {
    const { rows } = await this.db.query<Raw>(
      `SELECT a.id, a.state, a.version, a.snapshot, a.mode, m.name, m.allowed_origins,
              CASE WHEN $2::text IS NULL THEN NULL ELSE EXISTS (
                SELECT 1 FROM api_keys k
                 WHERE k.hash = $2 AND k.merchant = a.merchant AND k.mode = a.mode
                   AND k.kind = 'publishable' AND k.revoked_at IS NULL) END AS key_matches
         FROM actors a LEFT JOIN merchants m ON m.id = a.merchant
        WHERE a.id = $1 AND a.kind = 'payment_intent'`,
      [id, publishableKeyHash],
    );
    const r = rows[0];
    if (!r) return null;
    return {
      id: r.id,
      state: r.state,
      version: Number(r.version),
      snapshot: r.snapshot,
      merchantName: r.name ?? '',
      // Anything but an explicit test row is treated as live, the stricter of the two.
      mode: r.mode === 'test' ? 'test' : 'live',
      allowedOrigins: Array.isArray(r.allowed_origins) ? r.allowed_origins.filter((o): o is string => typeof o === 'string') : [],
      keyMatches: r.key_matches,
    };
  }
}
