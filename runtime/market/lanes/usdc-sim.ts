/**
 * The embedded USDC lane: a simulated EIP-3009 token in the database (DESIGN §5 "Lanes").
 * Balances, `authorizationState` and `transferWithAuthorization` behave as the token's do;
 * signatures are real EIP-712 checks (eip3009.ts). A faucet funds addresses for tests and
 * the CLI.
 */
import type { Db, Queryable } from '../../../storage/db.ts';
import { USDC_TOKEN } from '../../../machines/money/market.ts';
import type { CreateCompanion } from '../../engine/actor-types.ts';
import { hexOf, keccak256 } from '../keccak.ts';
import type { Authorization } from './eip3009.ts';
import type { AuthorizationState, NonceUse, SettleResult, StatesBatchForm, StatesRead, TransferTerms, UsdcLedger, UsdcToken } from './usdc-ledger.ts';

export type { SettleResult } from './usdc-ledger.ts';

const lower = (a: string): string => a.toLowerCase();

const statesSqls = new Map<number, string>();
/**
 * The ledger read of `count` authorizations, one row each in order, its parameters from $n on.
 * A list of VALUES, not arrays through unnest: the planner prices a generic plan over unnest's
 * unknown length above a custom one, so that statement was planned again on every purchase;
 * this shape has one statement per count (a purchase reads two) and keeps its generic plan.
 */
function statesSql(count: number, n = 1): string {
  const key = count * 1000 + n;
  let sql = statesSqls.get(key);
  if (!sql) {
    const values = Array.from({ length: count }, (_, i) => `($${n + 2 * i}::text, $${n + 2 * i + 1}::text, ${i})`).join(', ');
    sql = `SELECT EXISTS (SELECT 1 FROM usdc_authorizations u WHERE u.authorizer = x.authorizer AND u.nonce = x.nonce) AS used,
              (SELECT b.balance::text FROM usdc_balances b WHERE b.address = x.authorizer) AS balance, x.i
         FROM (VALUES ${values}) AS x(authorizer, nonce, i) ORDER BY x.i`;
    statesSqls.set(key, sql);
  }
  return sql;
}

const stateOf = (r: { used: boolean; balance: string | null }): AuthorizationState => ({ used: r.used, balance: BigInt(r.balance ?? '0') });
const statesAggSqls = new Map<number, string>();
/** `statesSql` as one JSON value, kept per count and first parameter as it is: the claim's statement is built around the same text every time. */
function statesAggSql(count: number, n: number): string {
  const key = count * 1000 + n;
  let sql = statesAggSqls.get(key);
  if (sql === undefined) statesAggSqls.set(key, (sql = `(SELECT json_agg(json_build_object('used', s.used, 'balance', s.balance) ORDER BY s.i) FROM (${statesSql(count, n)}) AS s)`));
  return sql;
}

/** `authorizationStatesRead` of several claims in one statement (ADR 0093): for each read `c`, the value `statesAggSql` gives it. */
const STATES_BATCH: StatesBatchForm = {
  name: 'usdc-sim',
  // Not EXISTS: over an array of unknown length the planner may hash the whole table for it,
  // and keep that plan once the table has grown; a subquery with LIMIT is probed by key.
  sql: (n) => `SELECT y.c, json_agg(json_build_object('used', coalesce((SELECT true FROM usdc_authorizations u WHERE u.authorizer = y.authorizer AND u.nonce = y.nonce LIMIT 1), false),
                                         'balance', (SELECT b.balance::text FROM usdc_balances b WHERE b.address = y.authorizer)) ORDER BY y.j) AS states
         FROM unnest($${n}::text[], $${n + 1}::text[], $${n + 2}::int[]) WITH ORDINALITY AS y(authorizer, nonce, c, j) GROUP BY y.c`,
  params: (reads) => {
    const [authorizers, nonces, claims]: [string[], string[], number[]] = [[], [], []];
    for (const [i, r] of reads.entries()) {
      for (const a of r?.batch?.auths ?? []) {
        authorizers.push(lower(a.authorizer));
        nonces.push(lower(a.nonce));
        claims.push(i + 1);
      }
    }
    return [authorizers, nonces, claims];
  },
};

const statesParams = (auths: ReadonlyArray<{ authorizer: string; nonce: string }>) => auths.flatMap((a) => [lower(a.authorizer), lower(a.nonce)]);

export class UsdcSimLedger implements UsdcLedger {
  readonly signers: readonly string[] = [];

  /** It stands in for the configured token (USDC on Base unless configured), under that token's domain. */
  constructor(
    private readonly db: Db,
    readonly token: UsdcToken = USDC_TOKEN,
  ) {}

  async fund(address: string, amount: bigint): Promise<bigint> {
    if (amount <= 0n) throw new RangeError('fund a positive amount');
    const { rows } = await this.db.query<{ balance: string }>(
      `INSERT INTO usdc_balances (address, balance) VALUES ($1, $2::numeric)
       ON CONFLICT (address) DO UPDATE SET balance = usdc_balances.balance + EXCLUDED.balance RETURNING balance::text`,
      [lower(address), amount.toString()],
    );
    return BigInt(rows[0]?.balance ?? '0');
  }

  async balanceOf(address: string, q: Queryable = this.db): Promise<bigint> {
    const { rows } = await q.query<{ balance: string }>(`SELECT balance::text FROM usdc_balances WHERE address = $1`, [lower(address)]);
    return BigInt(rows[0]?.balance ?? '0');
  }

  /** EIP-3009 `authorizationState(authorizer, nonce)`: true once used. */
  async authorizationState(authorizer: string, nonce: string): Promise<boolean> {
    const { rowCount } = await this.db.query(`SELECT 1 FROM usdc_authorizations WHERE authorizer = $1 AND nonce = $2`, [lower(authorizer), lower(nonce)]);
    return rowCount > 0;
  }

  async authorizationStates(auths: ReadonlyArray<{ authorizer: string; nonce: string }>): Promise<AuthorizationState[]> {
    const { rows } = await this.db.query<{ used: boolean; balance: string | null }>(statesSql(auths.length), statesParams(auths));
    return rows.map(stateOf);
  }

  authorizationStatesRead(auths: ReadonlyArray<{ authorizer: string; nonce: string }>): StatesRead {
    return {
      sql: (n) => statesAggSql(auths.length, n),
      params: statesParams(auths),
      parse: (v) => (v as Array<{ used: boolean; balance: string | null }>).map(stateOf),
      batch: { form: STATES_BATCH, auths },
    };
  }

  /** What used each nonce, from the ledger's record of the transfer that did (`UsdcLedger.nonceUses`): one statement for all. */
  async nonceUses(transfers: readonly TransferTerms[]): Promise<NonceUse[]> {
    const { rows } = await this.db.query<Partial<UsedAuthorization>>(USES_SQL, [transfers.map((t) => lower(t.from)), transfers.map((t) => lower(t.nonce))]);
    return transfers.map((t, i) => useOf(t, rows[i]));
  }

  /**
   * `transferWithAuthorization` of an already verified authorization, in one statement: the
   * nonce is used once; the same authorization again returns its transaction (settle is
   * idempotent per nonce); a different use of a used nonce, or a short balance, fails.
   */
  async transferWithAuthorization(a: Authorization, nowS: number): Promise<SettleResult> {
    if (BigInt(a.validBefore) <= BigInt(nowS)) return { ok: false, reason: 'invalid_exact_evm_payload_authorization_valid_before' };
    const [from, to, nonce] = [lower(a.from), lower(a.to), lower(a.nonce)];
    const tx = txOf(from, nonce);
    const { rows } = await this.db.query<{ moved: number } & Partial<UsedAuthorization>>(SETTLE_SQL, [from, nonce, to, a.value, tx]);
    const r = rows[0]!;
    if (r.moved === 1) return { ok: true, tx, replay: false };
    // Not moved: the nonce was used (seen by the statement, or by a settle that committed while
    // it waited, which only a fresh read sees), or the balance is short.
    const used = r.tx_hash ? (r as UsedAuthorization) : (await this.db.query<UsedAuthorization>(USED_SQL, [from, nonce])).rows[0];
    if (!used) return { ok: false, reason: 'invalid_exact_evm_insufficient_balance' };
    return used.recipient === to && used.value === a.value ? { ok: true, tx: used.tx_hash, replay: true } : { ok: false, reason: 'invalid_exact_evm_nonce_already_used' };
  }

  /** The settlement as part of the statement that records it (`UsdcLedger.settlementCompanion`, ADR 0052). */
  settlementCompanion(a: Authorization, nowS: number): { companion: CreateCompanion; tx: string } | null {
    if (BigInt(a.validBefore) <= BigInt(nowS)) return null;
    const [from, to, nonce] = [lower(a.from), lower(a.to), lower(a.nonce)];
    const tx = txOf(from, nonce);
    return {
      tx,
      companion: {
        ...SETTLEMENT_COMPANION,
        params: () => [from, nonce, to, a.value, tx],
        batch: { ...SETTLEMENT_BATCH, rows: (r) => [[{ actor_id: r.actorId, payer: from, nonce, payee: to, value: a.value, tx }]] },
      },
    };
  }

  /** The leg's ledger check as a guard on the statement that records it (`UsdcLedger.checkCompanion`, ADR 0059). */
  checkCompanion(authorizer: string, nonce: string, amount: bigint): CreateCompanion {
    const [payer, n, value] = [lower(authorizer), lower(nonce), amount.toString()];
    return { ...CHECK_COMPANION, params: () => [payer, n, value], batch: { ...CHECK_BATCH, rows: (r) => [[{ actor_id: r.actorId, payer, nonce: n, value }]] } };
  }
}

// Natively (ADR 0095): every served execution's fee settlement names its transaction here, and
// in JavaScript the hash cost about a third of a signature recovery.
const txOf = (from: string, nonce: string): string => `0x${hexOf(keccak256(Buffer.from(`usdc-sim:${from}:${nonce}`, 'utf8')))}`;

/** The settlement inside an actor's write: funds move only when its event is applied (`pe`), and the guard fails that statement when the nonce was not claimed. */
const SETTLEMENT_COMPANION: Omit<CreateCompanion, 'params'> = {
  name: 'usdc_settlement',
  arity: 5,
  cte: (n) => settleCtes(n, 'AND EXISTS (SELECT 1 FROM pe)'),
  guard: () => `EXISTS (SELECT 1 FROM claim)`,
};

/**
 * What `authorizationStates` reads, as a guard ($1 authorizer, $2 nonce, $3 amount): the nonce
 * unused and the balance enough, as the lane's `checkLedger` decides from the read. A CTE that
 * only reads, so the statement still writes one actor's rows (DESIGN §2).
 */
const CHECK_COMPANION: Omit<CreateCompanion, 'params'> = {
  name: 'usdc_check',
  arity: 3,
  cte: (n) => `ledger_ok AS (SELECT 1 WHERE coalesce((SELECT b.balance FROM usdc_balances b WHERE b.address = $${n}), 0) >= $${n + 2}::numeric
             AND NOT EXISTS (SELECT 1 FROM usdc_authorizations u WHERE u.authorizer = $${n} AND u.nonce = $${n + 1}))`,
  guard: () => `EXISTS (SELECT 1 FROM ledger_ok)`,
};

type BatchForm = Omit<NonNullable<CreateCompanion['batch']>, 'rows'>;

/**
 * `CHECK_COMPANION` for several executions recorded in one statement (ADR 0094): each leg
 * checked on its own against the ledger as it stands, as its own statement checks it; a leg
 * that fails keeps out its own execution only.
 */
const CHECK_BATCH: BatchForm = {
  guard: {
    cte: (n) => `lc AS (SELECT c.actor_id FROM jsonb_to_recordset($${n}::jsonb) AS c(actor_id text, payer text, nonce text, value numeric)
             WHERE coalesce((SELECT b.balance FROM usdc_balances b WHERE b.address = c.payer), 0) >= c.value
               AND NOT EXISTS (SELECT 1 FROM usdc_authorizations u WHERE u.authorizer = c.payer AND u.nonce = c.nonce))`,
    holds: (x) => `${x}.id IN (SELECT actor_id FROM lc)`,
  },
};

/**
 * `SETTLEMENT_COMPANION` for several events written in one statement (ADR 0094). Before any
 * actor is written, each settlement is checked as its own statement would find the ledger: its
 * nonce unused, and its payer's balance covering it with the batch's earlier settlements from
 * the same payer (in actor id order), so a failing one keeps out its own event only. After the
 * events are written, the balance rows of every payer and payee are locked in ascending address
 * order (as `settleCtes` locks them, after the actors as there), each settlement is claimed if
 * its payer's locked balance still covers it, and each address's balance moves once by its net
 * amount (a row updated twice in one statement would keep one update). A settlement the locked
 * rows no longer cover (another transaction debited the payer in between) or whose nonce another
 * transaction claimed meanwhile fails the statement whole (`sure`): each event is then written
 * alone.
 */
const SETTLEMENT_BATCH: BatchForm = {
  guard: {
    cte: (n) => `st AS (SELECT s.*, sum(s.value) OVER (PARTITION BY s.payer ORDER BY s.actor_id) AS upto
               FROM jsonb_to_recordset($${n}::jsonb) AS s(actor_id text, payer text, nonce text, payee text, value numeric, tx text)),
  st_ok AS (SELECT s.actor_id FROM st s
             WHERE coalesce((SELECT b.balance FROM usdc_balances b WHERE b.address = s.payer), 0) >= s.upto
               AND NOT EXISTS (SELECT 1 FROM usdc_authorizations u WHERE u.authorizer = s.payer AND u.nonce = s.nonce))`,
    holds: (x) => `${x}.id IN (SELECT actor_id FROM st_ok)`,
    sure: () => `(SELECT count(*) FROM sc) = (SELECT count(*) FROM sa)`,
  },
  cte: (_n, applied) => `sa AS (SELECT s.actor_id, s.payer, s.nonce, s.payee, s.value, s.tx, sum(s.value) OVER (PARTITION BY s.payer ORDER BY s.actor_id) AS upto
             FROM st s WHERE s.actor_id IN (SELECT actor_id FROM ${applied ?? 'st_ok'})),
  sl AS (SELECT address, balance FROM usdc_balances WHERE address IN (SELECT payer FROM sa UNION SELECT payee FROM sa) ORDER BY address FOR UPDATE),
  sc AS (INSERT INTO usdc_authorizations (authorizer, nonce, recipient, value, tx_hash)
         SELECT s.payer, s.nonce, s.payee, s.value, s.tx FROM sa s JOIN sl ON sl.address = s.payer WHERE sl.balance >= s.upto
         ON CONFLICT DO NOTHING RETURNING authorizer, recipient, value),
  sd AS (SELECT d.address, sum(d.delta) AS delta
           FROM (SELECT authorizer AS address, -value AS delta FROM sc WHERE authorizer <> recipient
                 UNION ALL SELECT recipient, value FROM sc WHERE authorizer <> recipient) AS d GROUP BY d.address),
  sm AS (UPDATE usdc_balances b SET balance = b.balance + d.delta FROM sd d WHERE b.address = d.address AND d.address IN (SELECT address FROM sl)),
  sn AS (INSERT INTO usdc_balances (address, balance) SELECT d.address, d.delta FROM sd d WHERE d.address NOT IN (SELECT address FROM sl)
         ON CONFLICT (address) DO UPDATE SET balance = usdc_balances.balance + EXCLUDED.balance)`,
};

interface UsedAuthorization {
  tx_hash: string;
  recipient: string;
  value: string;
}

/**
 * A settlement in one round trip ($1 from, $2 nonce, $3 to, $4 value, $5 tx). Balance rows
 * are locked in ascending address order, so two addresses paying each other at once cannot
 * deadlock: `rows` locks as it hands out rows sorted by address (LockRows above the Sort), and
 * `EXISTS (payer)` stops at the payer's row. So when the recipient sorts first both are locked
 * here; when the payer sorts first only the payer is, and `credit` locks the recipient after
 * it, still ascending. Keep that order if the statement changes. The payer's balance is
 * checked on the locked row, which is its latest version, so the nonce is
 * claimed only when the debit cannot fail (a short balance leaves it unused, as the token's
 * revert would) and settles from one payer queue on that row. A concurrent settle of the same
 * authorization waits on the nonce's key and then claims nothing. A transfer to oneself moves
 * nothing (the credit would touch the debited row again in the same statement).
 */
function settleCtes(n: number, gate = ''): string {
  const [from, nonce, to, value, tx] = [n, n + 1, n + 2, n + 3, n + 4].map((i) => `$${i}`);
  return `rows AS (SELECT address, balance FROM usdc_balances WHERE address IN (${from}, ${to}) ${gate} ORDER BY address FOR UPDATE),
  payer AS (SELECT 1 FROM rows WHERE address = ${from} AND balance >= ${value}::numeric),
  claim AS (INSERT INTO usdc_authorizations (authorizer, nonce, recipient, value, tx_hash)
            SELECT ${from}, ${nonce}, ${to}, ${value}::numeric, ${tx} WHERE EXISTS (SELECT 1 FROM payer) ON CONFLICT DO NOTHING RETURNING 1),
  debit AS (UPDATE usdc_balances SET balance = balance - ${value}::numeric WHERE address = ${from} AND ${from} <> ${to} AND EXISTS (SELECT 1 FROM claim)),
  credit AS (INSERT INTO usdc_balances (address, balance) SELECT ${to}, ${value}::numeric WHERE ${from} <> ${to} AND EXISTS (SELECT 1 FROM claim)
             ON CONFLICT (address) DO UPDATE SET balance = usdc_balances.balance + EXCLUDED.balance)`;
}

const SETTLE_SQL = `WITH ${settleCtes(1)}
  SELECT (SELECT count(*) FROM claim)::int AS moved, u.tx_hash, u.recipient, u.value::text AS value
    FROM (SELECT 1) AS one LEFT JOIN usdc_authorizations u ON u.authorizer = $1 AND u.nonce = $2`;

/** The simulation has no `cancelAuthorization`: a used nonce always has its transfer on record. */
function useOf(t: TransferTerms, used: Partial<UsedAuthorization> | undefined): NonceUse {
  if (!used?.tx_hash) return { state: 'unused' };
  if (used.recipient === lower(t.to) && BigInt(used.value ?? '-1') === BigInt(t.value)) return { state: 'settled', tx: used.tx_hash };
  return { state: 'spent', reason: `nonce used by a transfer of ${used.value} to ${used.recipient} (${used.tx_hash})` };
}

const USES_SQL = `SELECT u.tx_hash, u.recipient, u.value::text AS value
    FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS x(authorizer, nonce, i)
    LEFT JOIN usdc_authorizations u ON u.authorizer = x.authorizer AND u.nonce = x.nonce ORDER BY x.i`;

const USED_SQL = `SELECT tx_hash, recipient, value::text AS value FROM usdc_authorizations WHERE authorizer = $1 AND nonce = $2`;
