/**
 * The statements behind `Gate.pass` (storage/migrations/0002_merchants.sql) and the mapping of their rows.
 * When both tokens come from this process's leases, admission is a plain statement over many
 * requests at once (`Batcher`): the keys and their merchants, plus intent reads or
 * Idempotency-Key inserts (PL/pgSQL costs about a third more per call on these paths). Lease
 * operations and contested claims go through the PL/pgSQL functions, one request each.
 */
import type { PersistedSnapshot } from '../../machines/kit/step.ts';
import type { ClaimOutcome } from './gate-types.ts';
import type { LeaseReply } from './leases.ts';
import type { Mode } from './secrets.ts';

export interface GateRow {
  ip_granted?: number | null;
  ip_tokens?: number | null;
  ip_others?: number | null;
  key_id: string | null;
  merchant: string | null;
  mode: Mode | null;
  merchant_status: 'active' | 'suspended' | null;
  success_url: string | null;
  cancel_url: string | null;
  payout_address: string | null;
  key_granted?: number | null;
  key_tokens?: number | null;
  key_others?: number | null;
  claim?: 'claimed' | 'reused' | 'replay' | 'in_flight' | null;
  idem_intent_id?: string | null;
  idem_status?: number | null;
  idem_headers?: Record<string, string> | null;
  idem_body?: Uint8Array | null;
  read_state?: string | null;
  read_snapshot?: PersistedSnapshot | null;
}

export type NumberedRow = GateRow & { i: number };

export const GATE_LEASE_SQL = `SELECT * FROM anm_gate_lease(${Array.from({ length: 22 }, (_, i) => `$${i + 1}`).join(', ')})`;
export const SETTLE_SQL = `SELECT * FROM anm_lease_settle($1, $2, $3, $4, $5, $6, $7)`;
export const CLAIM_SQL = `SELECT * FROM anm_idem_claim($1, $2, $3, $4, $5, $6)`;

/**
 * Many requests' keys at once ($1 key hashes), each with an optional intent read ($2 ids, NULL
 * for none: one indexed read scoped to the key's merchant and mode). One row per found key,
 * `i` its 1-based position. Unique-index lookups whatever the table sizes (migration 0014).
 */
export const LOOKUP_MANY_SQL = `SELECT * FROM anm_gate_lookup_many($1, $2)`;

/**
 * Many uncontested claims at once ($1: `claimManyParams`). `claimed` false with an active key
 * means the Idempotency-Key is taken (or expired, or named twice in this batch): `anm_idem_claim`
 * decides. Asynchronous commit as in the other functions: a lost claim only lets a retry run again.
 *
 * A plain statement, not a PL/pgSQL function (migration 0017; the function's call, result set
 * and SET clause cost about as much as its query): the requests come as one jsonb document,
 * whose row count the planner cannot see (no estimate from the value, unlike `unnest` of an
 * array), so custom plans cost what the generic one does and PostgreSQL keeps the generic plan
 * after its first calls instead of planning every call; each offered key is still a
 * `LATERAL … LIMIT 1` lookup on unique indexes (test/integration/plan-stability.test.ts).
 */
export const CLAIM_MANY_SQL = `WITH x AS (SELECT * FROM jsonb_to_recordset($1::jsonb) AS x(i integer, hash text, idem text, request_hash text, new_id text)),
  k AS (
    SELECT x.i, x.idem, x.request_hash, x.new_id, k.key_id, k.merchant, k.mode, k.merchant_status, k.success_url, k.cancel_url, k.payout_address,
           row_number() OVER (PARTITION BY k.merchant, k.mode, x.idem ORDER BY x.i) AS rn
      FROM x CROSS JOIN LATERAL anm_secret_key(x.hash) k),
  async AS (SELECT set_config('synchronous_commit', 'off', true) AS v),
  c AS (
    INSERT INTO idempotency_keys (merchant, mode, key, request_hash, state, intent_id)
    SELECT k.merchant, k.mode, k.idem, k.request_hash, 'in_flight', k.new_id FROM k CROSS JOIN async WHERE k.merchant_status = 'active' AND k.rn = 1
    ON CONFLICT DO NOTHING RETURNING merchant, mode, key)
  SELECT k.i, k.key_id, k.merchant, k.mode, k.merchant_status, k.success_url, k.cancel_url, k.payout_address, c.key IS NOT NULL AS claimed
    FROM k LEFT JOIN c ON k.rn = 1 AND c.merchant = k.merchant AND c.mode = k.mode AND c.key = k.idem`;

export interface ClaimItem {
  hash: string;
  key: string;
  requestHash: string;
  newIntentId: string | null;
}

/** The one parameter of `CLAIM_MANY_SQL`: the claims in order, numbered from 1. */
export function claimManyParams(items: readonly ClaimItem[]): [string] {
  return [JSON.stringify(items.map((x, n) => ({ i: n + 1, hash: x.hash, idem: x.key, request_hash: x.requestHash, new_id: x.newIntentId })))];
}

export interface ClaimRow {
  claim: 'claimed' | 'reused' | 'replay' | 'in_flight';
  intent_id: string | null;
  status: number | null;
  headers: Record<string, string> | null;
  body: Uint8Array | null;
}

export const NO_KEY: GateRow = { key_id: null, merchant: null, mode: null, merchant_status: null, success_url: null, cancel_url: null, payout_address: null };

/** Rows numbered 1..n (missing: no such key) in input order. */
export function numbered<R extends { i: number }>(n: number, rows: R[]): Array<R | GateRow> {
  const out: Array<R | GateRow> = Array.from({ length: n }, () => NO_KEY);
  for (const r of rows) out[r.i - 1] = r;
  return out;
}

export function reply(granted: number | null | undefined, tokens: number | null | undefined, others: number | null | undefined): LeaseReply {
  return { granted: granted ?? 0, tokens: tokens ?? 0, others: others ?? 0 };
}

export function claimOf(r: GateRow): ClaimOutcome | null {
  switch (r.claim) {
    case null:
    case undefined:
      return null;
    case 'claimed':
      return { outcome: 'claimed', intentId: r.idem_intent_id ?? null };
    case 'replay':
      return { outcome: 'replay', status: r.idem_status!, headers: r.idem_headers ?? {}, body: Buffer.from(r.idem_body!) };
    default:
      return { outcome: r.claim };
  }
}
