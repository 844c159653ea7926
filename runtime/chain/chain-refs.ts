/**
 * The chain reference index (`chain_refs`): each payment and refund reference names the actor
 * that owns it, so the indexer can match a transaction to its actor. The row is written in the
 * statement that creates the actor (a `CreateCompanion` of the machine's registration), so no
 * handler writes it and it exists exactly when the actor does. It replaced a PL/pgSQL trigger
 * on `actors`, whose call cost every create about 0.04 ms of PostgreSQL CPU.
 */
import type { ApplyResult, CreateCompanion } from '../engine/actor-types.ts';
import type { SqlParam } from '../../storage/db.ts';

interface RefRow {
  reference: string;
  network: string;
  recipient: string;
  treasury: string | null;
  required: number;
}

const cte = (n: number) => `ref AS (INSERT INTO chain_refs (reference, network, actor_id, kind, recipient, treasury, required)
           SELECT $${n}::text, $${n + 1}::text, $1, $${n + 2}::text, $${n + 3}::text, $${n + 4}::text, $${n + 5}::integer
            WHERE $${n}::text IS NOT NULL AND EXISTS (SELECT 1 FROM pe)
           ON CONFLICT (reference, actor_id) DO NOTHING)`;

// The rows of several creates written together (CreateCompanion.batch).
const batchCte = (n: number, applied?: string) => `ref AS (INSERT INTO chain_refs (reference, network, actor_id, kind, recipient, treasury, required)
           SELECT r.reference, r.network, r.actor_id, r.kind, r.recipient, r.treasury, r.required
             FROM jsonb_to_recordset($${n}::jsonb) AS r(reference text, network text, actor_id text, kind text, recipient text, treasury text, required integer)${applied ? `
            WHERE r.actor_id IN (SELECT actor_id FROM ${applied})` : ''}
           ON CONFLICT (reference, actor_id) DO NOTHING)`;

function companion(kind: string, row: (ctx: Record<string, unknown>, created: ApplyResult) => RefRow | null): CreateCompanion {
  const rowOf = (created: ApplyResult) => row(created.snapshot.context as Record<string, unknown>, created);
  return {
    name: `chain_ref_${kind}`,
    arity: 6,
    cte,
    params: (created): SqlParam[] => {
      const r = rowOf(created);
      return r === null ? [null, null, null, null, null, null] : [r.reference, r.network, kind, r.recipient, r.treasury, r.required];
    },
    batch: {
      cte: batchCte,
      rows: (created) => {
        const r = rowOf(created);
        return [r === null ? [] : [{ ...r, actor_id: created.actorId, kind }]];
      },
    },
  };
}

const text = (v: unknown): string | null => (typeof v === 'string' ? v : null);

export const paymentIntentRefs = companion('payment_intent', (ctx, created) => {
  const reference = text(ctx.payment_reference);
  if (reference === null) return null;
  const required = Number(ctx.required_confirmations ?? 12);
  return { reference, network: created.mode ?? 'test', recipient: text(ctx.payment_address) ?? '', treasury: text(ctx.treasury_address), required: Number.isInteger(required) ? required : 12 };
});

export const refundRefs = companion('refund', (ctx, created) => {
  const reference = text(ctx.reference);
  if (reference === null) return null;
  return { reference, network: created.mode ?? 'live', recipient: text(ctx.to) ?? '', treasury: null, required: 12 };
});

/**
 * A purchase on the ANM lane (`native:1`, the live chain): one row for both legs, reference
 * `mp1:<intent>` with the seller as recipient and the fee payee as treasury; the indexer reads
 * the legs' references `mp1:<intent>:seller|fee` through it (indexer/matching.ts).
 */
export const purchaseRefs = companion('purchase', (ctx) => {
  if (ctx.asset !== 'ANM' || typeof ctx.required_confirmations !== 'number') return null;
  const payee = (v: unknown): string => (typeof v === 'object' && v !== null ? (text((v as Record<string, unknown>).pay_to) ?? '') : '');
  return { reference: `mp1:${text(ctx.intent_id) ?? ''}`, network: 'live', recipient: payee(ctx.seller), treasury: payee(ctx.fee), required: ctx.required_confirmations };
});
