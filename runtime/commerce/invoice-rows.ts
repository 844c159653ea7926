/**
 * The `/i/{token}` index (`invoice_tokens`): written in the statement that creates the invoice
 * actor (a `CreateCompanion` of its registration), so it exists exactly when the invoice does
 * and no handler writes it. The token is in the create event; a draft's page is still 404
 * (the reads check the state).
 */
import type { ApplyResult, CreateCompanion } from '../engine/actor-types.ts';
import type { SqlParam } from '../../storage/db.ts';

export const invoiceTokenRow: CreateCompanion = {
  name: 'invoice_token',
  arity: 3,
  cte: (n) => `tok AS (INSERT INTO invoice_tokens (token, actor_id, merchant, mode)
           SELECT $${n}::text, $1, $${n + 1}::text, $${n + 2}::text
            WHERE $${n}::text IS NOT NULL AND EXISTS (SELECT 1 FROM pe)
           ON CONFLICT DO NOTHING)`,
  params: (created: ApplyResult): SqlParam[] => {
    const token = (created.snapshot.context as { token?: unknown }).token;
    return [typeof token === 'string' ? token : null, created.merchant, created.mode];
  },
};
