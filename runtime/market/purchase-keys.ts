/**
 * The `idempotency-key` of `POST /api/v1/purchase` (ADR 0026): the merchant API's records and
 * rules (ADR 0005: one row in `idempotency_keys` claimed by `anm_idem_claim`, the first
 * response kept 24 hours and replayed byte for byte, another body under the key refused, a
 * retry while the first attempt runs refused, an attempt silent for a minute taken over),
 * scoped per purchase intent: the merchant column holds the intent id, the mode `market`.
 */
import type { Db } from '../../storage/db.ts';
import type { ApplyResult, CreateCompanion } from '../engine/actor-types.ts';
import type { ClaimRow } from '../merchant/gate-sql.ts';
import { IdempotencyRecords } from '../merchant/idempotency-records.ts';
import type { AuthorizationState, StatesRead } from './lanes/usdc-ledger.ts';
import { asRead, PURCHASE_KIND, type PurchaseRead, type PurchaseRow } from './purchases.ts';

const SCOPE = 'market';
/** As the merchant API's (runtime/merchant/index.ts). */
const TAKEOVER_AFTER_MS = 60_000;

// Asynchronous commit as the gate's claims: a lost claim only lets a retry run the purchase
// again, and a purchase with the same legs answers the same. A claimed key brings the purchase
// actor's row in the same round trip (ADR 0034): the purchase starts from it; and, given a
// ledger read, the legs' authorization states (ADR 0044).
const claimSql = (ledger?: StatesRead): string => `SELECT c.*, a.state, a.snapshot, a.version, a.merchant, a.mode${ledger ? `, CASE WHEN c.claim = 'claimed' THEN ${ledger.sql(5)} END AS ledger` : ''}
  FROM (SELECT set_config('synchronous_commit', 'off', true)) AS async
  CROSS JOIN LATERAL anm_idem_claim($1, '${SCOPE}', $2, $3, NULL, $4) AS c
  LEFT JOIN actors a ON c.claim = 'claimed' AND a.id = $1 AND a.kind = '${PURCHASE_KIND}'`;

export type PurchaseClaim =
  /**
   * `purchase`: the intent's actor as it stood when the key was claimed; null when there is
   * none. `ledger`: the states the claim's ledger read found, in the order asked.
   */
  | { outcome: 'claimed'; purchase: PurchaseRead | null; ledger?: AuthorizationState[] }
  | { outcome: 'reused' }
  | { outcome: 'in_flight' }
  | { outcome: 'replay'; status: number; headers: Record<string, string>; body: Buffer };

export class PurchaseKeys {
  private readonly records: IdempotencyRecords;

  constructor(private readonly db: Db) {
    this.records = new IdempotencyRecords(db);
  }

  /**
   * Claims `key` for this intent and request fingerprint, or says why the request must not run.
   * `ledger`: a ledger read to run in the same statement when the key is claimed.
   */
  async claim(intentId: string, key: string, requestHash: string, ledger?: StatesRead): Promise<PurchaseClaim> {
    const { rows } = await this.db.query<ClaimRow & Partial<PurchaseRow> & { ledger?: unknown }>(claimSql(ledger), [intentId, key, requestHash, TAKEOVER_AFTER_MS, ...(ledger?.params ?? [])]);
    const c = rows[0]!;
    if (c.claim === 'replay') return { outcome: 'replay', status: c.status!, headers: c.headers ?? {}, body: Buffer.from(c.body!) };
    if (c.claim === 'claimed') {
      const purchase = c.state && c.snapshot && c.version ? { ...asRead({ state: c.state, snapshot: c.snapshot }), row: { state: c.state, snapshot: c.snapshot, version: c.version, merchant: c.merchant ?? null, mode: c.mode ?? null } } : null;
      return ledger && c.ledger != null ? { outcome: 'claimed', purchase, ledger: ledger.parse(c.ledger) } : { outcome: 'claimed', purchase };
    }
    return { outcome: c.claim };
  }

  /** The first response, kept for replays. */
  done(intentId: string, key: string, status: number, headers: Record<string, string>, body: string): Promise<void> {
    return this.records.done(intentId, SCOPE, key, status, headers, body);
  }

  /**
   * The first response as a companion of the event that records the purchase: written with it
   * when the event is applied, in the same statement (ADR 0034). `render` makes the body.
   */
  recording(intentId: string, key: string, status: number, headers: Record<string, string>, render: (r: ApplyResult) => string): CreateCompanion {
    return this.records.withCreate(intentId, SCOPE, key, status, headers, render);
  }

  /** The attempt was refused or failed: nothing was recorded as paid, so a retry runs afresh. */
  release(intentId: string, key: string): Promise<void> {
    return this.records.release(intentId, SCOPE, key);
  }

  /** Records past 24 hours (the claim already ignores them). */
  sweep(): Promise<number> {
    return this.records.sweep();
  }
}
