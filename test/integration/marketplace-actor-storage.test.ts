/**
 * Migration 0014 (ADR 0044): what a marketplace purchase writes besides its own rows. The
 * merchant indexes of `actors` hold merchant actors only (a purchase, a listing and an
 * execution have no merchant, and their writes then touch the primary key alone), and a
 * merchant's reads still use them; an idempotency record's body is stored without a
 * compression attempt (a purchase's first response, mostly base64, never compressed).
 * Migration 0015: the marketplace's watch reads open purchases through an index of their own.
 * Migration 0016 (ADR 0049): a leg's nonce binding is indexed by its key alone.
 * Migration 0017 (ADR 0055): a purchase's first response stays in its record's row.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backendFactories, type Backend } from '../helpers/backends.ts';

describe.each(backendFactories)('marketplace actors and records in storage on %s', (name, open) => {
  let b: Backend;
  beforeAll(async () => {
    b = await open();
  });
  afterAll(async () => b.close());

  it('keeps marketplace actors out of the merchant indexes', async () => {
    const { rows } = await b.db.query<{ name: string; def: string }>(
      `SELECT c.relname AS name, pg_get_indexdef(c.oid) AS def FROM pg_index x JOIN pg_class c ON c.oid = x.indexrelid
        WHERE x.indrelid = 'actors'::regclass AND c.relname IN ('actors_merchant', 'actors_merchant_state') ORDER BY 1`,
    );
    expect(rows.map((r) => r.name)).toEqual(['actors_merchant', 'actors_merchant_state']);
    for (const r of rows) expect(r.def).toContain('WHERE (merchant IS NOT NULL)');
  });

  it.runIf(name === 'postgres+nats')('still reads one merchant\'s actors through them, in a generic plan too', async () => {
    await b.db.tx(async (q) => {
      await q.query(`SET LOCAL enable_seqscan = off`);
      await q.query(`SET LOCAL plan_cache_mode = force_generic_plan`);
      await q.query(`PREPARE merchant_list (text, text, text, int) AS SELECT id FROM actors WHERE merchant = $1 AND mode = $2 AND kind = $3 ORDER BY created_at DESC LIMIT $4`);
      await q.query(`PREPARE merchant_state (text, text, text) AS SELECT count(*) FROM actors WHERE merchant = $1 AND mode = $2 AND kind = 'payment_intent' AND state = $3`);
      const plan = async (sql: string) => (await q.query<{ 'QUERY PLAN': string }>(sql)).rows.map((r) => r['QUERY PLAN']).join('\n');
      expect(await plan(`EXPLAIN EXECUTE merchant_list ('m_1', 'live', 'payment_intent', 10)`)).toContain('actors_merchant');
      expect(await plan(`EXPLAIN EXECUTE merchant_state ('m_1', 'live', 'PAID')`)).toContain('actors_merchant_state');
      await q.query(`DEALLOCATE merchant_list`);
      await q.query(`DEALLOCATE merchant_state`);
    });
  });

  it('stores an idempotency record\'s body as it is, without a compression attempt', async () => {
    const { rows } = await b.db.query<{ storage: string }>(`SELECT attstorage AS storage FROM pg_attribute WHERE attrelid = 'idempotency_keys'::regclass AND attname = 'body'`);
    expect(rows[0]?.storage).toBe('e');
  });
  it('migration 0016: a nonce binding costs a purchase one index entry, its key (nothing reads bindings by intent)', async () => {
    const { rows } = await b.db.query<{ name: string }>(`SELECT c.relname AS name FROM pg_index x JOIN pg_class c ON c.oid = x.indexrelid WHERE x.indrelid = 'market_leg_nonces'::regclass ORDER BY 1`);
    expect(rows.map((r) => r.name)).toEqual(['market_leg_nonces_pkey']);
  });

  it.runIf(name === 'postgres+nats')('migration 0015: the watch reads open purchases through their own index, not by scanning every actor', async () => {
    await b.db.tx(async (q) => {
      await q.query(`SET LOCAL enable_seqscan = off`);
      await q.query(`SET LOCAL plan_cache_mode = force_generic_plan`);
      const plan = async (sql: string) => (await q.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${sql}`)).rows.map((r) => r['QUERY PLAN']).join('\n');
      // The same texts as Purchases.reconcile and Executions.reconcile.
      expect(await plan(`SELECT id, state, snapshot FROM actors WHERE kind = 'purchase' AND state = 'VERIFIED'`)).toContain('actors_open_purchases');
      expect(await plan(`SELECT id, snapshot FROM actors WHERE kind = 'purchase' AND state = 'EXECUTING'`)).toContain('actors_open_purchases');
    });
    const { rows } = await b.db.query<{ def: string }>(`SELECT pg_get_indexdef('actors_open_purchases'::regclass) AS def`);
    expect(rows[0]?.def).toContain("WHERE ((kind = 'purchase'::text) AND (state = ANY");
  });

  it('migration 0017: a purchase-sized first response stays in the row, writing nothing to the TOAST table', async () => {
    const toast = (await b.db.query<{ t: string }>(`SELECT reltoastrelid::regclass::text AS t FROM pg_class WHERE oid = 'idempotency_keys'::regclass`)).rows[0]!.t;
    const chunks = async () => (await b.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${toast}`)).rows[0]!.n;
    const before = await chunks();
    // Base64 as a purchase's seller leg is: it does not compress, so only the row's limit decides.
    const body = randomBytes(2_100).toString('base64');
    await b.db.query(`INSERT INTO idempotency_keys (merchant, mode, key, request_hash, state, status, body) VALUES ('pi_toast', 'market', 'k', 'h', 'done', 200, convert_to($1, 'UTF8'))`, [body]);
    expect(await chunks()).toBe(before);
    const kept = await b.db.query<{ body: string }>(`SELECT convert_from(body, 'UTF8') AS body FROM idempotency_keys WHERE merchant = 'pi_toast'`);
    expect(kept.rows[0]?.body).toBe(body);
  });
});
