/**
 * What admission asks of the gate and what it answers (runtime/merchant/gate.ts), apart from
 * the gate itself so its statements (gate-sql.ts) can name them without importing the gate.
 */
import type { PersistedSnapshot } from '../../machines/kit/step.ts';
import type { BucketLimits } from './leases.ts';
import type { Mode } from './secrets.ts';

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
