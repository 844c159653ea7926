/**
 * ADR 0055: a purchase's Idempotency-Key is claimed by a plain insert when the key is new, and
 * by `anm_idem_claim` otherwise. Whatever record the key already has, the outcome and the
 * record left behind are those of `anm_idem_claim` alone (the path before ADR 0055).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PurchaseKeys } from '../../runtime/market/purchase-keys.ts';
import { backendFactories, type Backend } from '../helpers/backends.ts';
import { counting } from '../helpers/counting-db.ts';

/** A record a key may already have: state, whose request, how old its claim and its last touch. */
interface Prior {
  state: 'in_flight' | 'done';
  sameRequest: boolean;
  createdAgo: string;
  updatedAgo: string;
}

const priors: Array<Prior | null> = [null];
for (const state of ['in_flight', 'done'] as const) {
  for (const sameRequest of [true, false]) {
    for (const [createdAgo, updatedAgo] of [['1 second', '1 second'], ['2 minutes', '2 minutes'], ['25 hours', '25 hours'], ['25 hours', '1 second']]) {
      priors.push({ state, sameRequest, createdAgo: createdAgo!, updatedAgo: updatedAgo! });
    }
  }
}

describe.each(backendFactories)('purchase key claims on %s', (_name, open) => {
  let b: Backend;
  beforeAll(async () => {
    b = await open();
  });
  afterAll(async () => b.close());

  const record = async (intent: string, key: string) =>
    (
      await b.db.query<Record<string, unknown>>(
        `SELECT state, request_hash, intent_id, status, headers, convert_from(body, 'UTF8') AS body, created_at > now() - interval '1 hour' AS recent, updated_at > now() - interval '30 seconds' AS touched
           FROM idempotency_keys WHERE merchant = $1 AND mode = 'market' AND key = $2`,
        [intent, key],
      )
    ).rows[0] ?? null;

  const seed = async (intent: string, key: string, p: Prior) =>
    b.db.query(
      `INSERT INTO idempotency_keys (merchant, mode, key, request_hash, state, status, headers, body, created_at, updated_at)
       VALUES ($1, 'market', $2, $3, $4, $5, $6::jsonb, $7, now() - $8::interval, now() - $9::interval)`,
      [intent, key, p.sameRequest ? 'h1' : 'h0', p.state, p.state === 'done' ? 200 : null, p.state === 'done' ? '{"x-a":"1"}' : null, p.state === 'done' ? Buffer.from('{"ok":true}') : null, p.createdAgo, p.updatedAgo],
    );

  it('answers and leaves every prior record as anm_idem_claim alone does', async () => {
    const keys = new PurchaseKeys(b.db);
    for (const [i, p] of priors.entries()) {
      const [viaKeys, viaFunction] = [`pi_keys_${i}`, `pi_func_${i}`];
      if (p) {
        await seed(viaKeys, 'k', p);
        await seed(viaFunction, 'k', p);
      }
      const got = await keys.claim(viaKeys, 'k', 'h1');
      const want = (await b.db.query<{ claim: string; status: number | null; headers: unknown; body: Uint8Array | null }>(`SELECT * FROM anm_idem_claim($1, 'market', 'k', 'h1', NULL, 60000)`, [viaFunction])).rows[0]!;
      const why = JSON.stringify(p);
      expect(got.outcome, why).toBe(want.claim);
      if (got.outcome === 'replay') {
        expect([got.status, got.headers, Buffer.from(got.body).toString()], why).toEqual([want.status, want.headers, Buffer.from(want.body!).toString()]);
      }
      expect(await record(viaKeys, 'k'), why).toEqual(await record(viaFunction, 'k'));
    }
  });

  it('a new key costs one statement, a plain insert without the function; a key seen before, the function after it', async () => {
    const c = counting(b.db);
    const keys = new PurchaseKeys(c.db);
    expect((await keys.claim('pi_new', 'k', 'h1')).outcome).toBe('claimed');
    expect(c.statements).toHaveLength(1);
    expect(c.statements[0]).toMatch(/^WITH c AS \(INSERT INTO idempotency_keys/);
    c.statements.length = 0;
    expect((await keys.claim('pi_new', 'k', 'h1')).outcome).toBe('in_flight');
    expect(c.statements.map((s) => s.slice(0, 10))).toEqual(['WITH c AS ', 'SELECT c.*']);
  });

  // ADR 0063: the actor's snapshot comes back only when the row kept in this process is not at its version.
  it('sends no snapshot for a row kept at its version, on both claim paths; a stale or no kept row gets the stored one', async () => {
    const stored = { status: 'active', value: 'QUOTED', context: { intent_id: 'pi_kept', from: 'database' } };
    await b.db.query(
      `INSERT INTO actors (id, kind, merchant, mode, machine, machine_version, state, snapshot, version) VALUES ('pi_kept', 'purchase', NULL, NULL, 'purchase', 1, 'QUOTED', $1::jsonb, 3)`,
      [JSON.stringify(stored)],
    );
    const keys = new PurchaseKeys(b.db);
    const kept = (version: number) => ({ version, state: 'QUOTED', snapshot: { status: 'active', value: 'QUOTED', context: { intent_id: 'pi_kept', from: 'process' } }, merchant: null, mode: null });
    const rowOf = (c: Awaited<ReturnType<PurchaseKeys['claim']>>) => (c.outcome === 'claimed' ? c.purchase?.row : undefined);

    const same = kept(3);
    const fresh = rowOf(await keys.claim('pi_kept', 'k1', 'h', undefined, same));
    expect(fresh?.snapshot).toBe(same.snapshot);
    expect(fresh?.version).toBe(3);
    expect(rowOf(await keys.claim('pi_kept', 'k2', 'h', undefined, kept(2)))?.snapshot).toEqual(stored);
    expect(rowOf(await keys.claim('pi_kept', 'k3', 'h'))?.snapshot).toEqual(stored);

    // A key whose record has expired is claimed through anm_idem_claim: the same rule.
    await b.db.query(`UPDATE idempotency_keys SET created_at = now() - interval '25 hours' WHERE merchant = 'pi_kept' AND key IN ('k1', 'k2')`);
    const again = kept(3);
    expect(rowOf(await keys.claim('pi_kept', 'k1', 'h', undefined, again))?.snapshot).toBe(again.snapshot);
    expect(rowOf(await keys.claim('pi_kept', 'k2', 'h', undefined, kept(4)))?.snapshot).toEqual(stored);
  });
});
