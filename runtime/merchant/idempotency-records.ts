/**
 * The rest of an Idempotency-Key's life after admission claimed it (ADR 0005): the first
 * response, or release after a failure. Responses finishing while earlier writes are in flight
 * are written together in one statement (`anm_idempotency_done_many`, migration 0002), so under
 * load a create costs a fraction of this round trip; alone, it is written at once.
 */
import type { ApplyResult, CreateCompanion } from '../engine/actor-types.ts';
import type { Db } from '../../storage/db.ts';
import { Batcher } from './batcher.ts';
import type { Mode } from './secrets.ts';

/** A key's scope besides the merchant column: the merchant's mode, or `market` for marketplace purchases (ADR 0026). */
export type KeyScope = Mode | 'market';

interface Done {
  merchant: string;
  mode: KeyScope;
  key: string;
  status: number;
  headers: string;
  body: string;
}

const DONE_MANY_SQL = `SELECT anm_idempotency_done_many($1, $2, $3, $4, $5, $6)`;

export class IdempotencyRecords {
  private readonly writes: Batcher<Done, undefined>;

  constructor(private readonly db: Db) {
    this.writes = new Batcher(async (batch) => {
      await db.query(DONE_MANY_SQL, [
        batch.map((p) => p.merchant),
        batch.map((p) => p.mode),
        batch.map((p) => p.key),
        batch.map((p) => p.status),
        batch.map((p) => p.headers),
        batch.map((p) => p.body),
      ]);
      return batch.map(() => undefined);
    }, { maxInFlight: 2 });
  }

  /** Records the first response (a JSON body); resolves once it is written. */
  done(merchant: string, mode: KeyScope, key: string, status: number, headers: Record<string, string>, body: Buffer | string): Promise<void> {
    return this.writes.push({ merchant, mode, key, status, headers: JSON.stringify(headers), body: typeof body === 'string' ? body : body.toString('utf8') });
  }

  /**
   * The first response written in the statement that creates the intent (`CreateCompanion`),
   * or that records a marketplace purchase (ADR 0034): it commits with the event, and costs
   * no statement of its own. `render` makes the body from the actor as the event leaves it;
   * the route sends what it returned. The write takes the companion's parameters when it is
   * planned and its batch rows when it is written with others (update-batch.ts): the body is
   * rendered once per result, not once for each (ADR 0095).
   */
  withCreate(merchant: string, mode: KeyScope, key: string, status: number, headers: Record<string, string>, render: (created: ApplyResult) => string): CreateCompanion {
    let last: { created: ApplyResult; body: string } | undefined;
    const body = (created: ApplyResult): string => {
      if (last?.created !== created) last = { created, body: render(created) };
      return last.body;
    };
    return {
      name: 'idempotency_done',
      arity: 6,
      cte: (n) => `idem AS (UPDATE idempotency_keys SET state = 'done', status = $${n}, headers = $${n + 1}::jsonb, body = convert_to($${n + 2}, 'UTF8'), updated_at = now()
           WHERE merchant = $${n + 3} AND mode = $${n + 4} AND key = $${n + 5} AND EXISTS (SELECT 1 FROM pe))`,
      params: (created) => [status, JSON.stringify(headers), body(created), merchant, mode, key],
      // Marketplace purchases recorded together (ADR 0090): each row names the actor whose event writes it.
      batch: {
        cte: (n, applied) => `idem AS (UPDATE idempotency_keys k SET state = 'done', status = r.status, headers = r.headers, body = convert_to(r.body, 'UTF8'), updated_at = now()
           FROM jsonb_to_recordset($${n}::jsonb) AS r(actor_id text, status integer, headers jsonb, body text, merchant text, mode text, key text)
           WHERE k.merchant = r.merchant AND k.mode = r.mode AND k.key = r.key${applied ? ` AND r.actor_id IN (SELECT actor_id FROM ${applied})` : ''})`,
        rows: (created) => [[{ actor_id: created.actorId, status, headers, body: body(created), merchant, mode, key }]],
      },
    };
  }

  /** The attempt failed without a response worth replaying: let a retry run afresh. */
  async release(merchant: string, mode: KeyScope, key: string): Promise<void> {
    await this.db.query(`DELETE FROM idempotency_keys WHERE merchant = $1 AND mode = $2 AND key = $3 AND state = 'in_flight'`, [merchant, mode, key]);
  }

  /** Records live 24 hours (DESIGN §4); older ones are already ignored by the claim. */
  async sweep(): Promise<number> {
    const res = await this.db.query(`DELETE FROM idempotency_keys WHERE created_at < now() - interval '24 hours'`);
    return res.rowCount;
  }
}
