/**
 * Admission for merchant API requests in one database round trip (`anm_gate`, migration
 * 0002): IP and key token buckets shared by every gateway process (ADR 0004), the key and
 * its merchant, and optionally an Idempotency-Key claim (ADR 0005) or one intent snapshot.
 */
import type { Db } from '../../storage/db.ts';
import type { PersistedSnapshot } from '../../machines/kit/step.ts';
import type { Mode } from './secrets.ts';

export interface BucketLimits {
  /** Burst: tokens a full bucket holds. */
  capacity: number;
  perMinute: number;
}

export interface GateLimits {
  ip: BucketLimits;
  key: BucketLimits;
  /** An in-flight Idempotency-Key older than this is taken over by a retry. */
  takeoverAfterMs: number;
}

export interface Bucket {
  ok: boolean;
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
  ip_ok: boolean;
  ip_tokens: number;
  key_id: string | null;
  merchant: string | null;
  mode: Mode | null;
  merchant_status: 'active' | 'suspended' | null;
  success_url: string | null;
  cancel_url: string | null;
  payout_address: string | null;
  key_ok: boolean | null;
  key_tokens: number | null;
  claim: 'claimed' | 'reused' | 'replay' | 'in_flight' | null;
  idem_intent_id: string | null;
  idem_status: number | null;
  idem_headers: Record<string, string> | null;
  idem_body: Uint8Array | null;
  read_state: string | null;
  read_snapshot: PersistedSnapshot | null;
}

const GATE_SQL = `SELECT * FROM anm_gate($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`;

export class Gate {
  constructor(
    private readonly db: Db,
    readonly limits: GateLimits,
  ) {}

  async pass(input: GateInput): Promise<GateResult> {
    const { ip, key } = this.limits;
    const { rows } = await this.db.query<GateRow>(GATE_SQL, [
      input.ip,
      ip.capacity,
      ip.perMinute / 60,
      input.keyHash,
      key.capacity,
      key.perMinute / 60,
      input.claim?.key ?? null,
      input.claim?.requestHash ?? null,
      input.claim?.newIntentId ?? null,
      this.limits.takeoverAfterMs,
      input.readId ?? null,
    ]);
    const r = rows[0]!;
    return {
      ip: { ok: r.ip_ok, tokens: r.ip_tokens, limits: ip },
      key:
        r.key_id && r.merchant && r.mode && r.merchant_status
          ? {
              id: r.key_id,
              merchant: r.merchant,
              mode: r.mode,
              merchantStatus: r.merchant_status,
              successUrl: r.success_url,
              cancelUrl: r.cancel_url,
              payoutAddress: r.payout_address,
            }
          : null,
      keyBucket: r.key_ok === null || r.key_tokens === null ? null : { ok: r.key_ok, tokens: r.key_tokens, limits: key },
      claim: claimOf(r),
      read: r.read_state && r.read_snapshot ? { state: r.read_state, snapshot: r.read_snapshot } : null,
    };
  }
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

/** The rest of an Idempotency-Key's life: the first response, or release after a failure. */
export class IdempotencyRecords {
  constructor(private readonly db: Db) {}

  async done(merchant: string, mode: Mode, key: string, status: number, headers: Record<string, string>, body: Buffer): Promise<void> {
    await this.db.query(`SELECT anm_idempotency_done($1, $2, $3, $4, $5::jsonb, $6)`, [merchant, mode, key, status, JSON.stringify(headers), body]);
  }

  /** The attempt failed without a response worth replaying: let a retry run afresh. */
  async release(merchant: string, mode: Mode, key: string): Promise<void> {
    await this.db.query(`DELETE FROM idempotency_keys WHERE merchant = $1 AND mode = $2 AND key = $3 AND state = 'in_flight'`, [merchant, mode, key]);
  }

  /** Records live 24 hours (DESIGN §4); older ones are already ignored by `anm_gate`. */
  async sweep(): Promise<number> {
    const res = await this.db.query(`DELETE FROM idempotency_keys WHERE created_at < now() - interval '24 hours'`);
    return res.rowCount;
  }
}
