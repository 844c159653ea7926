/**
 * Account nonces held by open ANM purchases (ADR 0043). A fee transfer is signed with the nonce
 * right after its seller transfer's and waits until that transfer is settled; meanwhile any other
 * transfer of the same payer at that nonce would take its place on the chain, and the purchase
 * would end FEE_FAILED with its seller paid. So a purchase holds both legs' nonces from the moment
 * it records them until it ends (SETTLED, SELLER_FAILED, EXPIRED, FEE_FAILED), and every way a
 * transfer enters through the marketplace (purchase, routed execution, the facilitator's
 * `exact-anm`) refuses one at a nonce another open purchase holds. Only the payer can sign at its
 * own nonces, so a hold never stands in anyone else's way.
 */
import { TERMINAL } from '../../machines/purchase/view.ts';
import type { ChainLegs } from '../../machines/purchase/chain-legs.ts';
import type { Queryable } from '../../storage/db.ts';
import type { CreateCompanion } from '../engine/actor-types.ts';
import { MarketRefusal } from './errors.ts';

export const NONCE_HELD = 'invalid_exact_anm_nonce_held';

export interface NonceToHold {
  payer: string;
  nonce: bigint;
  leg: 'seller' | 'fee';
  hash: string;
}

/** The purchase actors' kind (purchases.ts, which builds on this module). */
const PURCHASE = 'purchase';

/**
 * The holds' upsert over `source`, rows of (payer, nonce, intent, leg, tx_hash): a held nonce
 * passes to this purchase only when the one holding it has ended, or is this one (a retry).
 * `kind` and `terminal` are SQL expressions for the purchase kind and its terminal states.
 */
const upsertHolds = (source: string, kind: string, terminal: string) => `INSERT INTO market_anm_nonce_holds AS h (payer, nonce, intent_id, leg, tx_hash)
    ${source}
    ON CONFLICT (payer, nonce) DO UPDATE SET intent_id = excluded.intent_id, leg = excluded.leg, tx_hash = excluded.tx_hash
     WHERE h.intent_id = excluded.intent_id
        OR NOT EXISTS (SELECT 1 FROM actors a WHERE a.id = h.intent_id AND a.kind = ${kind} AND NOT (a.state = ANY(${terminal}::text[])))`;

/** Parameters from `$first`: payers, nonces, legs, hashes, intent, the terminal states, the purchase kind. `when` limits the rows written. */
const holdSql = (first: number, when = '') => {
  const p = (i: number) => `$${first + i}`;
  const source = `SELECT x.payer, x.nonce, ${p(4)}, x.leg, x.tx_hash FROM unnest(${p(0)}::text[], ${p(1)}::numeric[], ${p(2)}::text[], ${p(3)}::text[]) AS x(payer, nonce, leg, tx_hash) ${when}`;
  return `${upsertHolds(source, p(6), p(5))}
    RETURNING h.nonce::text AS nonce`;
};

const holdParams = (intentId: string, legs: readonly NonceToHold[]) => [
  legs.map((l) => l.payer),
  legs.map((l) => l.nonce.toString()),
  legs.map((l) => l.leg),
  legs.map((l) => l.hash),
  intentId,
  TERMINAL,
  PURCHASE,
];

// The batch form's constants are written into its SQL (its parameters are the rows alone).
const sqlText = (v: string) => {
  if (!/^[a-z_]+$/i.test(v)) throw new Error(`not a plain word: ${v}`);
  return `'${v}'`;
};
const TERMINAL_SQL = `ARRAY[${TERMINAL.map(sqlText).join(', ')}]`;
const batchRows = (n: number) => `jsonb_to_recordset($${n}::jsonb) AS b(actor_id text, payer text, nonce text, leg text, tx_hash text)`;

/**
 * The holds written in the statement that records the legs (`purchase.verify`,
 * `purchase.execute`): all of them or, when an open purchase holds one, nothing of the
 * statement (`CompanionRefusedError`); `holdAlone` then says which. Written with other
 * purchases' records in one statement (ADR 0090, 0108), a hold refused fails that statement
 * whole, and each purchase is then recorded alone, where its own statement refuses it as above.
 */
export function holdCompanion(intentId: string, legs: readonly NonceToHold[]): CreateCompanion {
  return {
    name: 'market_anm_nonce_holds',
    arity: 7,
    cte: (n) => `nh AS (${holdSql(n, 'WHERE EXISTS (SELECT 1 FROM pe)')})`,
    guard: (n) => `(SELECT count(*) FROM nh) = cardinality($${n}::text[])`,
    params: () => holdParams(intentId, legs),
    batch: {
      cte: (n, applied) =>
        `nh AS (${upsertHolds(`SELECT b.payer, b.nonce::numeric, b.actor_id, b.leg, b.tx_hash FROM ${batchRows(n)}${applied ? ` WHERE b.actor_id IN (SELECT actor_id FROM ${applied})` : ''}`, sqlText(PURCHASE), TERMINAL_SQL)}
    RETURNING 1)`,
      rows: () => [legs.map((l) => ({ actor_id: intentId, payer: l.payer, nonce: l.nonce.toString(), leg: l.leg, tx_hash: l.hash }))],
      guard: {
        // Every applied purchase's holds written, or the statement fails whole: what the upsert
        // refused (a nonce another open purchase holds) is known only once it ran.
        sure: (n) => `(SELECT count(*) FROM nh) = (SELECT count(*) FROM ${batchRows(n)} WHERE b.actor_id IN (SELECT actor_id FROM pe))`,
      },
    },
  };
}

/**
 * Holds the legs' nonces on their own, in the caller's transaction: throws `leg_replayed` when an
 * open purchase holds one (the caller rolls back what this wrote).
 */
export async function holdAlone(q: Queryable, intentId: string, legs: readonly NonceToHold[]): Promise<void> {
  const { rows } = await q.query<{ nonce: string }>(holdSql(1), holdParams(intentId, legs));
  const taken = new Set(rows.map((r) => r.nonce));
  const refused = legs.find((l) => !taken.has(l.nonce.toString()));
  if (refused) {
    throw new MarketRefusal(
      'leg_replayed',
      `${refused.leg} leg: nonce ${refused.nonce} of the payer is held by another open purchase whose transfer at that nonce is not on the chain yet; sign after that purchase's nonces, or once it has ended`,
      NONCE_HELD,
    );
  }
}

export class AnmNonceHolds {
  constructor(private readonly db: Queryable) {}

  /**
   * Why a transfer must not be settled outside its purchase: its nonce is held by an open
   * purchase that recorded another transfer there. The recorded transfers themselves pass (a
   * seller settles the leg it was paid with through the facilitator). Null when free.
   */
  async heldAgainst(payer: string, nonce: bigint, hash: string): Promise<string | null> {
    const { rows } = await this.db.query<{ leg: string; chain: Pick<ChainLegs, 'seller' | 'fee'> | null }>(
      `SELECT h.leg, a.snapshot->'context'->'chain' AS chain FROM market_anm_nonce_holds h
         JOIN actors a ON a.id = h.intent_id AND a.kind = $3 AND NOT (a.state = ANY($4::text[]))
        WHERE h.payer = $1 AND h.nonce = $2`,
      [payer, nonce.toString(), PURCHASE, TERMINAL],
    );
    const held = rows[0];
    if (!held || held.chain?.seller.tx === hash || held.chain?.fee.tx === hash) return null;
    return `nonce ${nonce} of the payer is held by an open marketplace purchase's ${held.leg} transfer, not on the chain yet`;
  }
}
