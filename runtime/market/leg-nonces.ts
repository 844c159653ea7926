/**
 * Every leg's nonce bound to its purchase intent and leg (`market_leg_nonces`, ADR 0017): a
 * leg is never accepted by a second purchase, and a settlement seen on a lane finds its
 * purchase. A purchase binds both nonces in the statement that records it `VERIFIED`
 * (`bindingCompanion`, ADR 0034); `bindLegs` binds them on their own and says which one is
 * taken. A fee leg's authorization is the marketplace's to use, after the seller leg
 * (`feeLegBinding`, ADR 0092).
 */
import type { MarketAsset } from '../../machines/money/market.ts';
import type { VerifiedLeg } from '../../machines/purchase/events.ts';
import type { Queryable } from '../../storage/db.ts';
import type { CreateCompanion } from '../engine/actor-types.ts';
import { MarketRefusal } from './errors.ts';

export interface LegToBind {
  leg: VerifiedLeg;
  name: 'seller' | 'fee';
}

const columns = (lane: MarketAsset, intentId: string, legs: readonly LegToBind[]) => [lane, legs.map((l) => l.leg.payer), legs.map((l) => l.leg.nonce), legs.map((l) => l.name), intentId];

/**
 * Binds each leg's nonce to this intent and leg in one statement: a nonce bound to another
 * purchase or leg is a replay. A leg bound again to the same intent and leg (a retry) passes.
 */
export async function bindLegs(db: Queryable, lane: MarketAsset, intentId: string, legs: readonly LegToBind[]): Promise<void> {
  const { rows } = await db.query<{ intent_id: string | null; leg: string | null }>(
    `WITH x AS (SELECT * FROM unnest($2::text[], $3::text[], $4::text[]) WITH ORDINALITY AS x(authorizer, nonce, leg, i)),
     ins AS (INSERT INTO market_leg_nonces (lane, authorizer, nonce, intent_id, leg) SELECT $1, authorizer, nonce, $5, leg FROM x ORDER BY i ON CONFLICT DO NOTHING RETURNING authorizer, nonce, intent_id, leg)
     SELECT coalesce(ins.intent_id, m.intent_id) AS intent_id, coalesce(ins.leg, m.leg) AS leg
       FROM x LEFT JOIN ins ON ins.authorizer = x.authorizer AND ins.nonce = x.nonce
              LEFT JOIN market_leg_nonces m ON m.lane = $1 AND m.authorizer = x.authorizer AND m.nonce = x.nonce
      ORDER BY x.i`,
    columns(lane, intentId, legs),
  );
  for (const [i, { name }] of legs.entries()) {
    const bound = rows[i];
    if (bound?.intent_id !== intentId || bound.leg !== name) throw new MarketRefusal('leg_replayed', `The ${name} leg's nonce is already bound to another purchase.`, 'invalid_exact_evm_nonce_already_used');
  }
}

/**
 * The same bindings written with the purchase's `purchase.verify`: all of them, or the
 * statement fails (`CompanionRefusedError`) and nothing of it is written; the purchase then
 * binds with `bindLegs`, which tells a replay from its own earlier binding. A plain insert
 * whose conflict on the key is the refusal: no speculative insertion, no count.
 */
export function bindingCompanion(lane: MarketAsset, intentId: string, legs: readonly LegToBind[]): CreateCompanion {
  return {
    name: 'market_leg_nonces',
    arity: 5,
    cte: (n) => `nb AS (INSERT INTO market_leg_nonces (lane, authorizer, nonce, intent_id, leg)
           SELECT $${n}, x.authorizer, x.nonce, $${n + 4}, x.leg FROM unnest($${n + 1}::text[], $${n + 2}::text[], $${n + 3}::text[]) AS x(authorizer, nonce, leg)
            WHERE EXISTS (SELECT 1 FROM pe))`,
    unique: ['market_leg_nonces_pkey'],
    params: () => columns(lane, intentId, legs),
    // Purchases recorded together (ADR 0090): a nonce taken fails the whole statement, and each
    // purchase is then recorded alone, where this companion is refused as above.
    batch: {
      cte: (n, applied) => `nb AS (INSERT INTO market_leg_nonces (lane, authorizer, nonce, intent_id, leg)
           SELECT b.lane, b.authorizer, b.nonce, b.actor_id, b.leg FROM jsonb_to_recordset($${n}::jsonb) AS b(actor_id text, lane text, authorizer text, nonce text, leg text)${applied ? `
            WHERE b.actor_id IN (SELECT actor_id FROM ${applied})` : ''})`,
      rows: () => [legs.map((l) => ({ actor_id: intentId, lane, authorizer: l.leg.payer, nonce: l.leg.nonce, leg: l.name }))],
    },
  };
}

/**
 * The purchase whose fee leg an authorization's nonce is bound to, or null. Such an
 * authorization is used only by the purchase, once its seller leg has settled (DESIGN §5 "The
 * fee is taken only if the seller is paid"): the facilitator refuses it (ADR 0092).
 */
export async function feeLegBinding(db: Queryable, lane: MarketAsset, authorizer: string, nonce: string): Promise<string | null> {
  const { rows } = await db.query<{ intent_id: string }>(`SELECT intent_id FROM market_leg_nonces WHERE lane = $1 AND authorizer = $2 AND nonce = $3 AND leg = 'fee'`, [lane, authorizer.toLowerCase(), nonce.toLowerCase()]);
  return rows[0]?.intent_id ?? null;
}
