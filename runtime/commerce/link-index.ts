/**
 * Rows that find payment links and their holds (migration 0007), each written in the
 * statement that creates its actor (a `CreateCompanion`, as the chain reference index is):
 * no handler writes them, and they exist exactly when the actor does. A slug or code already
 * taken fails the create's statement as a whole (unique violation), so no actor is left
 * without its row.
 */
import type { ApplyResult, CreateCompanion } from '../engine/actor-types.ts';
import type { SqlParam } from '../../storage/db.ts';

const ctx = (created: ApplyResult) => created.snapshot.context as Record<string, unknown>;

export const paymentLinkIndex: CreateCompanion = {
  name: 'payment_link_index',
  arity: 4,
  cte: (n) => `plx AS (INSERT INTO payment_links (id, merchant, mode, slug, code)
           SELECT $1, $${n}::text, $${n + 1}::text, $${n + 2}::text, $${n + 3}::text WHERE EXISTS (SELECT 1 FROM pe))`,
  params: (created): SqlParam[] => [created.merchant, created.mode, String(ctx(created).slug), String(ctx(created).code)],
};

export const linkHoldIndex: CreateCompanion = {
  name: 'link_hold_index',
  arity: 1,
  cte: (n) => `lhx AS (INSERT INTO payment_link_holds (link_id, hold_id)
           SELECT $${n}::text, $1 WHERE EXISTS (SELECT 1 FROM pe) ON CONFLICT DO NOTHING)`,
  params: (created): SqlParam[] => [String(ctx(created).link_id)],
};

/** Which unique index a failed link create hit: the slug, the code, or something else. */
export function takenIndex(err: unknown): 'slug' | 'code' | null {
  const e = err as { code?: string; constraint?: string; message?: string };
  if (e?.code !== '23505') return null;
  const where = `${e.constraint ?? ''} ${e.message ?? ''}`;
  if (where.includes('payment_links_slug')) return 'slug';
  if (where.includes('payment_links_code')) return 'code';
  return null;
}
