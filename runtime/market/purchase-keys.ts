/**
 * The `idempotency-key` of `POST /api/v1/purchase` (ADR 0026): the merchant API's records and
 * rules (ADR 0005: one row in `idempotency_keys` claimed by `anm_idem_claim`, the first
 * response kept 24 hours and replayed byte for byte, another body under the key refused, a
 * retry while the first attempt runs refused, an attempt silent for a minute taken over),
 * scoped per purchase intent: the merchant column holds the intent id, the mode `market`.
 */
import type { Db, SqlParam } from '../../storage/db.ts';
import type { ApplyResult, CreateCompanion } from '../engine/actor-types.ts';
import type { CachedActor } from '../engine/snapshot-cache.ts';
import { TurnBatcher, STATEMENTS_IN_FLIGHT } from '../engine/turn-batch.ts';
import type { ClaimRow } from '../merchant/gate-sql.ts';
import { IdempotencyRecords } from '../merchant/idempotency-records.ts';
import type { AuthorizationState, StatesBatchForm, StatesRead } from './lanes/usdc-ledger.ts';
import { asRead, PURCHASE_KIND, type PurchaseRead, type PurchaseRow } from './purchase-read.ts';

const SCOPE = 'market';
/** As the merchant API's (runtime/merchant/index.ts). */
const TAKEOVER_AFTER_MS = 60_000;

// Asynchronous commit as the gate's claims: a lost claim only lets a retry run the purchase
// again, and a purchase with the same legs answers the same. A claimed key brings the purchase
// actor's row in the same round trip (ADR 0034): the purchase starts from it; and, given a
// ledger read, the legs' authorization states (ADR 0044).
const ASYNC = `(SELECT set_config('synchronous_commit', 'off', true)) AS async`;
// The actor's snapshot only when this process does not hold the row at its version already (the
// quote was made here, or an earlier attempt read it), as pages are read (ADR 0060): the same
// row, without its jsonb written out by PostgreSQL and parsed again here (ADR 0063).
const snapshotUnlessKept = (keptVersion: string) => `CASE WHEN a.version = ${keptVersion} THEN NULL ELSE a.snapshot END AS snapshot`;
const actorJoin = (on: string) => `LEFT JOIN actors a ON ${on}a.id = $1 AND a.kind = '${PURCHASE_KIND}'`;

// A key never seen (nearly every purchase) is claimed by the insert alone, as anm_idem_claim's
// first statement does, without the function call (ADR 0055). No row back: the key exists, and
// the function tells a replay, another request, an attempt in flight or one to take over.
// The setting rides in the insert's own FROM so that it holds even when no row comes back (the
// conflict still locks the key's row, a write the commit would otherwise wait to flush).
const NEW_KEY_CONFLICT = `ON CONFLICT ON CONSTRAINT idempotency_keys_pkey DO UPDATE
      SET request_hash = EXCLUDED.request_hash, state = 'in_flight', intent_id = EXCLUDED.intent_id,
          status = NULL, headers = NULL, body = NULL, created_at = now(), updated_at = now()
      WHERE i.created_at < now() - interval '24 hours'`;
const newKeyText = (ledgerSql: string): string => `WITH c AS (INSERT INTO idempotency_keys AS i (merchant, mode, key, request_hash, state, intent_id)
    SELECT $1, '${SCOPE}', $2, $3, 'in_flight', NULL FROM ${ASYNC}
    ${NEW_KEY_CONFLICT}
    RETURNING 'claimed'::text AS claim)
SELECT c.claim, a.state, ${snapshotUnlessKept('$4::int')}, a.version, a.merchant, a.mode${ledgerSql && `, ${ledgerSql} AS ledger`}
  FROM c ${actorJoin('')}`;

const claimText = (ledgerSql: string): string => `SELECT c.*, a.state, ${snapshotUnlessKept('$5::int')}, a.version, a.merchant, a.mode${ledgerSql && `, CASE WHEN c.claim = 'claimed' THEN ${ledgerSql} END AS ledger`}
  FROM ${ASYNC}
  CROSS JOIN LATERAL anm_idem_claim($1, '${SCOPE}', $2, $3, NULL, $4) AS c
  ${actorJoin("c.claim = 'claimed' AND ")}`;

/**
 * A statement's text kept per ledger read, so that every claim sends the same string: built
 * afresh, each purchase paid for its concatenation and for hashing it again to find its
 * prepared statement. The key is the read's own text (`StatesRead.sql` gives the same string
 * for the same shape), whose hash the engine keeps with it. `ledgerSql`: '' without a read.
 */
function keptBy(build: (ledgerSql: string) => string, firstParam: number): (ledger?: StatesRead) => string {
  const kept = new Map<string, string>();
  return (ledger) => {
    const ledgerSql = ledger ? ledger.sql(firstParam) : '';
    let sql = kept.get(ledgerSql);
    if (sql === undefined) {
      sql = build(ledgerSql);
      // Bounded for a ledger whose text varies: then it is built per claim, as before.
      if (kept.size < 64) kept.set(ledgerSql, sql);
    }
    return sql;
  };
}
const newKeySql = keptBy(newKeyText, 5);
const claimSql = keptBy(claimText, 6);

/** New-key claims in one statement at most: its arrays grow with it, and a failed batch is retried one by one. */
export const MAX_CLAIM_BATCH = 64;

/** A new-key claim as the batch takes it. */
interface NewKey {
  intentId: string;
  key: string;
  requestHash: string;
  keptVersion: number | null;
  ledger: StatesRead | undefined;
}

type Row = ClaimRow & Partial<PurchaseRow> & { ledger?: unknown };

/**
 * New-key claims arriving in one event-loop turn, in one statement (ADR 0093): the insert of
 * each key, as `newKeyText` makes it, over arrays in (intent, key) order, so that two batches
 * lock keys in one order; each claimed key's actor row unless kept, and its ledger states from
 * the ledger's batch form ($5 on). Parameters: $1 intents, $2 keys, $3 request hashes, $4 kept
 * versions. Rows only for the keys claimed, each with its position `i`.
 */
const newKeysText = (ledger: StatesBatchForm | undefined): string => `WITH x AS (SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::int[]) WITH ORDINALITY AS x(intent, key, hash, kept, i)),
c AS (INSERT INTO idempotency_keys AS i (merchant, mode, key, request_hash, state, intent_id)
    SELECT x.intent, '${SCOPE}', x.key, x.hash, 'in_flight', NULL FROM x CROSS JOIN ${ASYNC} ORDER BY x.i
    ${NEW_KEY_CONFLICT}
    RETURNING i.merchant, i.key)${ledger ? `,\nl AS MATERIALIZED (${ledger.sql(5)})` : ''}
SELECT x.i::int AS i, 'claimed'::text AS claim, a.state, ${snapshotUnlessKept('x.kept')}, a.version, a.merchant, a.mode${ledger ? ', l.states AS ledger' : ''}
  FROM x JOIN c ON c.merchant = x.intent AND c.key = x.key
  LEFT JOIN actors a ON a.id = x.intent AND a.kind = '${PURCHASE_KIND}'${ledger ? `\n  LEFT JOIN l ON l.c = x.i` : ''}`;

const newKeysTexts = new Map<string, string>();
function newKeysSql(ledger: StatesBatchForm | undefined): string {
  const name = ledger?.name ?? '';
  let sql = newKeysTexts.get(name);
  if (sql === undefined) newKeysTexts.set(name, (sql = newKeysText(ledger)));
  return sql;
}

const byKey = (a: NewKey, b: NewKey): number => (a.intentId < b.intentId ? -1 : a.intentId > b.intentId ? 1 : a.key < b.key ? -1 : a.key > b.key ? 1 : 0);

/** `max`: claims per statement at most; 1 sends each alone. The answer: the claimed row, or none when the key exists. */
function newKeyBatcher(db: Db, max: number): TurnBatcher<NewKey, Row | undefined> {
  return new TurnBatcher({
    max,
    inFlight: STATEMENTS_IN_FLIGHT,
    // A ledger read without a batch form is sent with its claim alone; claims without a read go together.
    groupOf: (c) => (c.ledger ? (c.ledger.batch?.form.name ?? null) : ''),
    // One key twice in one insert is an error (a row affected twice), and the second is the rare path anyway.
    distinct: (c) => `${c.intentId}\n${c.key}`,
    alone: async (c) => (await db.query<Row>(newKeySql(c.ledger), [c.intentId, c.key, c.requestHash, c.keptVersion, ...(c.ledger?.params ?? [])])).rows[0],
    together: async (claims) => {
      const sorted = [...claims].sort(byKey);
      const form = sorted.find((c) => c.ledger)?.ledger?.batch?.form;
      const params: SqlParam[] = [sorted.map((c) => c.intentId), sorted.map((c) => c.key), sorted.map((c) => c.requestHash), sorted.map((c) => c.keptVersion)];
      if (form) params.push(...form.params(sorted.map((c) => c.ledger)));
      const { rows } = await db.query<Row & { i: number }>(newKeysSql(form), params);
      const claimed = new Map(rows.map((r) => [sorted[r.i - 1]!, r]));
      return claims.map((c) => claimed.get(c));
    },
  });
}

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
  private readonly newKeys: TurnBatcher<NewKey, Row | undefined>;

  /** `claimBatch`: new-key claims of one turn per statement at most (ADR 0093); 1 sends each alone. */
  constructor(
    private readonly db: Db,
    claimBatch = MAX_CLAIM_BATCH,
  ) {
    this.records = new IdempotencyRecords(db);
    this.newKeys = newKeyBatcher(db, claimBatch);
  }

  /**
   * Claims `key` for this intent and request fingerprint, or says why the request must not run.
   * `ledger`: a ledger read to run in the same statement when the key is claimed. `kept`: the
   * purchase actor's row as this process holds it; at the same version the statement sends no
   * snapshot back and the claim carries the kept one.
   */
  async claim(intentId: string, key: string, requestHash: string, ledger?: StatesRead, kept?: CachedActor): Promise<PurchaseClaim> {
    const keptVersion = kept?.version ?? null;
    // A new key with the others of its turn (ADR 0093); a key that exists (rare) alone, through the function.
    let c = await this.newKeys.write({ intentId, key, requestHash, keptVersion, ledger });
    c ??= (await this.db.query<Row>(claimSql(ledger), [intentId, key, requestHash, TAKEOVER_AFTER_MS, keptVersion, ...(ledger?.params ?? [])])).rows[0]!;
    if (c.claim === 'replay') return { outcome: 'replay', status: c.status!, headers: c.headers ?? {}, body: Buffer.from(c.body!) };
    if (c.claim === 'claimed') {
      // No snapshot sent: the row is at the version kept, so it is the kept row.
      const snapshot = c.snapshot ?? (kept && c.version === kept.version ? kept.snapshot : undefined);
      const purchase = c.state && snapshot && c.version ? { ...asRead({ state: c.state, snapshot }), row: { state: c.state, snapshot, version: c.version, merchant: c.merchant ?? null, mode: c.mode ?? null } } : null;
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
