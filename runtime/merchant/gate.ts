/**
 * Admission for merchant API requests (`anm_gate_lease`, migration 0005): IP and key token
 * buckets shared by every gateway process through leases (ADR 0004, `LeaseBook`), the key and
 * its merchant, and optionally an Idempotency-Key claim (ADR 0005) or one intent snapshot. At
 * most one round trip per request; none for a keyless request served from the IP lease.
 */
import type { Db } from '../../storage/db.ts';
import type { PersistedSnapshot } from '../../machines/kit/step.ts';
import { LeaseBook, type BucketLimits, type BucketView, type LeaseOptions, type LeaseReply, type LeaseRequest } from './leases.ts';
import type { Mode } from './secrets.ts';

export type { BucketLimits } from './leases.ts';
export { IdempotencyRecords } from './idempotency-records.ts';

export interface GateLimits {
  ip: BucketLimits;
  key: BucketLimits;
  /** An in-flight Idempotency-Key older than this is taken over by a retry. */
  takeoverAfterMs: number;
}

export interface Bucket {
  ok: boolean;
  /** What the client may still spend on this dimension (X-RateLimit-Remaining, floored). */
  tokens: number;
  limits: BucketLimits;
}

export interface GateKey {
  id: string;
  merchant: string;
  mode: Mode;
  merchantStatus: 'active' | 'suspended';
  successUrl: string | null;
  cancelUrl: string | null;
  payoutAddress: string | null;
}

export type ClaimOutcome =
  | { outcome: 'claimed'; intentId: string | null }
  | { outcome: 'reused' }
  | { outcome: 'in_flight' }
  | { outcome: 'replay'; status: number; headers: Record<string, string>; body: Buffer };

export interface GateInput {
  ip: string;
  /** Keyed hash of a well-formed secret key, or null when none was offered. */
  keyHash: string | null;
  /** `newIntentId` null: the caller derives the id itself (merchant_order_id, ADR 0006). */
  claim?: { key: string; requestHash: string; newIntentId: string | null };
  readId?: string;
}

export interface GateResult {
  ip: Bucket;
  /** The key when it exists, is secret and unrevoked; its merchant may be suspended. */
  key: GateKey | null;
  keyBucket: Bucket | null;
  claim: ClaimOutcome | null;
  read: { state: string; snapshot: PersistedSnapshot } | null;
}

interface GateRow {
  ip_granted: number | null;
  ip_tokens: number | null;
  ip_others: number | null;
  key_id: string | null;
  merchant: string | null;
  mode: Mode | null;
  merchant_status: 'active' | 'suspended' | null;
  success_url: string | null;
  cancel_url: string | null;
  payout_address: string | null;
  key_granted: number | null;
  key_tokens: number | null;
  key_others: number | null;
  claim: 'claimed' | 'reused' | 'replay' | 'in_flight' | null;
  idem_intent_id: string | null;
  idem_status: number | null;
  idem_headers: Record<string, string> | null;
  idem_body: Uint8Array | null;
  read_state: string | null;
  read_snapshot: PersistedSnapshot | null;
}

const GATE_SQL = `SELECT * FROM anm_gate_lease($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20)`;
const SETTLE_SQL = `SELECT * FROM anm_lease_settle($1, $2, $3, $4, $5, $6, $7)`;
/** Keyed hashes of keys seen lately → key id (never changes for a hash): the key's bucket is known before the round trip. */
const KEY_IDS_MAX = 10_000;

export interface GateOptions {
  leases?: LeaseOptions;
  /** How often idle leases are settled. */
  sweepMs?: number;
}

export class Gate {
  readonly leases: LeaseBook;
  private readonly keyIds = new Map<string, string>();
  private sweeper: NodeJS.Timeout | undefined;
  private readonly sweepMs: number;

  constructor(
    private readonly db: Db,
    readonly limits: GateLimits,
    opts: GateOptions = {},
  ) {
    this.leases = new LeaseBook(opts.leases);
    this.sweepMs = opts.sweepMs ?? 1_000;
  }

  async pass(input: GateInput): Promise<GateResult> {
    const { ip: ipLimits, key: keyLimits } = this.limits;
    const ipBucket = `ip:${input.ip}`;
    const ipLocal = await this.local(ipBucket);
    if (ipLocal && !ipLocal.ok) return this.result({ ip: ipLocal });
    const knownId = input.keyHash === null ? undefined : this.keyIds.get(input.keyHash);
    const keyBucket = knownId === undefined ? null : `key:${knownId}`;
    if (ipLocal && input.keyHash === null) return this.result({ ip: ipLocal });
    // Taken before the IP dimension is decided by the store, and given back if it refuses.
    const keyLocal = keyBucket ? await this.local(keyBucket) : null;

    const ipReq = ipLocal ? null : this.leases.request(ipBucket, ipLimits);
    const keyReq = input.keyHash !== null && !keyLocal ? this.leases.request(keyBucket, keyLimits) : null;
    const keyRefused = keyLocal?.ok === false;
    const claim = keyRefused ? undefined : input.claim;
    let r: GateRow;
    try {
      const { rows } = await this.db.query<GateRow>(GATE_SQL, [
        this.leases.holder,
        this.leases.ttlMs,
        ipReq ? ipBucket : null,
        ipLimits.capacity,
        ipLimits.perMinute / 60,
        ipReq?.want ?? 0,
        ipReq?.settle ?? 0,
        ipReq?.unused ?? 0,
        input.keyHash,
        keyLimits.capacity,
        keyLimits.perMinute / 60,
        keyReq !== null,
        keyReq?.want ?? 0,
        keyReq?.settle ?? 0,
        keyReq?.unused ?? 0,
        claim?.key ?? null,
        claim?.requestHash ?? null,
        claim?.newIntentId ?? null,
        this.limits.takeoverAfterMs,
        keyRefused ? null : (input.readId ?? null),
      ]);
      r = rows[0]!;
    } catch (err) {
      // Whether the lease operations were applied is unknown: leases start over under a new name.
      this.leases.fail();
      ipReq?.done();
      keyReq?.done();
      throw err;
    }
    this.startSweeper();
    const ip = ipReq ? this.leases.settle(ipReq, reply(r.ip_granted, r.ip_tokens, r.ip_others)) : ipLocal!;
    if (!ip.ok && keyLocal) this.leases.refund(keyBucket!, keyLocal);
    const key =
      r.key_id && r.merchant && r.mode && r.merchant_status
        ? { id: r.key_id, merchant: r.merchant, mode: r.mode, merchantStatus: r.merchant_status, successUrl: r.success_url, cancelUrl: r.cancel_url, payoutAddress: r.payout_address }
        : null;
    // The key was looked up unless the IP dimension refused first.
    if (input.keyHash !== null && ip.ok) this.remember(input.keyHash, key?.id);
    let keyView: BucketView | null = keyLocal;
    if (keyReq) {
      if (r.key_granted === null || !key) {
        this.leases.abort(keyReq);
        keyView = null;
      } else {
        keyView = this.leases.settle(keyReq, reply(r.key_granted, r.key_tokens, r.key_others), `key:${key.id}`);
      }
    }
    return this.result({ ip, key, keyView: key?.merchantStatus === 'active' ? keyView : null, row: r });
  }

  /** Settles every idle lease now (tests, shutdown); the sweeper does this every second. */
  async sweep(): Promise<void> {
    const reqs = this.leases.idle();
    if (reqs.length === 0) return;
    let rows: Array<{ bucket: string; tokens: number; others: number }>;
    try {
      ({ rows } = await this.db.query<{ bucket: string; tokens: number; others: number }>(SETTLE_SQL, [
        this.leases.holder,
        this.leases.ttlMs,
        reqs.map((q) => q.bucket!),
        reqs.map((q) => q.limits.capacity),
        reqs.map((q) => q.limits.perMinute / 60),
        reqs.map((q) => q.settle),
        reqs.map((q) => q.unused),
      ]));
    } catch (err) {
      this.leases.fail();
      for (const q of reqs) q.done();
      throw err;
    }
    const byBucket = new Map(rows.map((x) => [x.bucket, x]));
    for (const q of reqs) {
      const x = byBucket.get(q.bucket!);
      this.leases.settle(q, { granted: 0, tokens: x?.tokens ?? 0, others: x?.others ?? 0 });
    }
  }

  close(): void {
    clearInterval(this.sweeper);
    this.sweeper = undefined;
  }

  /** From the local lease, waiting for a lease request of another caller in flight; null: ask the store. */
  private async local(bucket: string): Promise<BucketView | null> {
    for (;;) {
      const v = this.leases.take(bucket);
      if (v) return v;
      const p = this.leases.pending(bucket);
      if (!p) return null;
      await p;
    }
  }

  private remember(hash: string, id: string | undefined): void {
    if (id === undefined) {
      this.keyIds.delete(hash);
      return;
    }
    if (this.keyIds.get(hash) === id) return;
    if (this.keyIds.size >= KEY_IDS_MAX) this.keyIds.delete(this.keyIds.keys().next().value!);
    this.keyIds.set(hash, id);
  }

  private startSweeper(): void {
    if (this.sweeper) return;
    this.sweeper = setInterval(() => {
      if (this.leases.size === 0) return this.close();
      this.sweep().catch(() => undefined);
    }, this.sweepMs);
    this.sweeper.unref();
  }

  private result(p: { ip: BucketView; key?: GateKey | null; keyView?: BucketView | null; row?: GateRow }): GateResult {
    const { ip, key, keyView, row } = p;
    return {
      ip: { ok: ip.ok, tokens: ip.tokens, limits: this.limits.ip },
      key: key ?? null,
      keyBucket: keyView ? { ok: keyView.ok, tokens: keyView.tokens, limits: this.limits.key } : null,
      claim: row ? claimOf(row) : null,
      read: row?.read_state && row.read_snapshot ? { state: row.read_state, snapshot: row.read_snapshot } : null,
    };
  }
}

function reply(granted: number | null, tokens: number | null, others: number | null): LeaseReply {
  return { granted: granted ?? 0, tokens: tokens ?? 0, others: others ?? 0 };
}

function claimOf(r: GateRow): ClaimOutcome | null {
  switch (r.claim) {
    case null:
      return null;
    case 'claimed':
      return { outcome: 'claimed', intentId: r.idem_intent_id };
    case 'replay':
      return { outcome: 'replay', status: r.idem_status!, headers: r.idem_headers ?? {}, body: Buffer.from(r.idem_body!) };
    default:
      return { outcome: r.claim };
  }
}

export type { LeaseRequest };
