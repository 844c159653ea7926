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

function companion(kind: string, row: (ctx: Record<string, unknown>, created: ApplyResult) => RefRow | null): CreateCompanion {
  return {
    name: `chain_ref_${kind}`,
    arity: 6,
    cte,
    params: (created): SqlParam[] => {
      const r = row(created.snapshot.context as Record<string, unknown>, created);
      return r === null ? [null, null, null, null, null, null] : [r.reference, r.network, kind, r.recipient, r.treasury, r.required];
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
