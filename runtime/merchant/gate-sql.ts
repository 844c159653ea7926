/**
 * The statements behind `Gate.pass` (migrations 0002, 0005 and 0007) and the mapping of their rows.
 * When both tokens come from this process's leases, admission is a plain statement over many
 * requests at once (`Batcher`): the keys and their merchants, plus intent reads or
 * Idempotency-Key inserts (PL/pgSQL costs about a third more per call on these paths). Lease
 * operations and contested claims go through the PL/pgSQL functions, one request each.
 */
import type { PersistedSnapshot } from '../../machines/kit/step.ts';
import type { ClaimOutcome } from './gate.ts';
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
 * Many uncontested claims at once: $1 key hashes, $2 Idempotency-Keys, $3 request hashes, $4 new
 * intent ids. `claimed` false with an active key means the Idempotency-Key is taken (or
 * expired, or named twice in this batch): `anm_idem_claim` decides. Asynchronous commit as in
 * the other functions: a lost claim only lets a retry run again.
 */
export const CLAIM_MANY_SQL = `SELECT * FROM anm_gate_claim_many($1, $2, $3, $4)`;

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
