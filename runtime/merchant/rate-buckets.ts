/**
 * The sweep of the shared token buckets (`rate_buckets`, ADR 0004; ADR 0054). A bucket is
 * named by what it limits (`ip:<address>`, `pay:<link> <address>`), so without a sweep the
 * table gains a row for every address that ever called, forever.
 *
 * A row is deleted only once it would have refilled to capacity: every writer creates a
 * missing bucket full, so a deleted row and a kept one give the next request the same tokens
 * and the limits hold across the sweep. `key:` buckets are never swept: there is one per API
 * key, and its `updated_at` is the key's "last used" on the dashboard.
 *
 * The walk goes along the primary key in bounded batches rather than by an index on
 * `updated_at`: such an index would change on every bucket update and cost the hot path its
 * heap-only updates, while the walk costs one index range read per batch of live rows. Every
 * gateway process may sweep at once: a delete re-checks `updated_at` on the row as committed,
 * so a bucket touched meanwhile stays.
 */
import type { Db } from '../../storage/db.ts';
import type { GateLimits } from './gate-types.ts';
import type { BucketLimits } from './leases.ts';

/** Buckets whose names start with `prefix`, refilled as `limits` say. */
export interface BucketKind {
  prefix: string;
  limits: BucketLimits;
}

export interface RateBucketOptions {
  /** Rows read per statement. */
  batch?: number;
}

/** Seconds an untouched bucket takes to refill from empty to full. */
export function fullAfterSeconds(l: BucketLimits): number {
  return l.capacity / (l.perMinute / 60);
}

/**
 * The kinds a gateway process writes: the API's per-IP buckets (the gate's) and, when it serves
 * payment links, the buyers' Pay buckets (per link and IP, burst as large as a minute's presses).
 */
export function gatewayBucketKinds(gate: Pick<GateLimits, 'ip'>, payPerIpPerMinute?: number): BucketKind[] {
  const kinds: BucketKind[] = [{ prefix: 'ip:', limits: gate.ip }];
  if (payPerIpPerMinute !== undefined) kinds.push({ prefix: 'pay:', limits: { capacity: payPerIpPerMinute, perMinute: payPerIpPerMinute } });
  return kinds;
}

/**
 * One batch: the next `$2` buckets after `$1` in key order, the stale ones of each kind deleted
 * with their leases that have run out (a crashed holder's; a live lease stays and the next
 * operation on the bucket counts it).
 */
const SWEEP_SQL = `WITH s AS (SELECT bucket FROM rate_buckets WHERE bucket > $1 ORDER BY bucket LIMIT $2),
  d AS (
    DELETE FROM rate_buckets b USING s, unnest($3::text[], $4::float8[]) AS k(prefix, secs)
     WHERE b.bucket = s.bucket AND starts_with(b.bucket, k.prefix) AND b.updated_at < now() - make_interval(secs => k.secs)
    RETURNING b.bucket),
  l AS (DELETE FROM rate_leases r USING d WHERE r.bucket = d.bucket AND r.expires_at <= now())
  SELECT (SELECT max(bucket) FROM s) AS last, (SELECT count(*)::int FROM s) AS seen, (SELECT count(*)::int FROM d) AS deleted`;

export class RateBuckets {
  private readonly batch: number;

  constructor(
    private readonly db: Db,
    opts: RateBucketOptions = {},
  ) {
    this.batch = opts.batch ?? 1_000;
  }

  /** One pass over the table; returns how many buckets went. */
  async sweep(kinds: readonly BucketKind[]): Promise<number> {
    if (kinds.length === 0) return 0;
    const prefixes = kinds.map((k) => k.prefix);
    const secs = kinds.map((k) => fullAfterSeconds(k.limits));
    let cursor = '';
    let deleted = 0;
    for (;;) {
      const { rows } = await this.db.query<{ last: string | null; seen: number; deleted: number }>(SWEEP_SQL, [cursor, this.batch, prefixes, secs]);
      const r = rows[0]!;
      deleted += r.deleted;
      if (r.seen < this.batch || r.last === null) return deleted;
      cursor = r.last;
    }
  }
}
