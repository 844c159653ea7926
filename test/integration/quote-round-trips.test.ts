/**
 * A regression guard for `npm run bench:quote` that no load on the machine can move: a quote
 * (`POST /api/v1/route/quote`) sends one statement, the purchase actor's create with its
 * expiry timer (and, on the ANM lane, its chain reference), and answers with the intent it
 * created (ADR 0058). Its commit does not wait for the WAL flush (ADR 0064).
 */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildMarketApp } from '../../gateway/market/app.ts';
import { ActorHost } from '../../runtime/engine/actor-host.ts';
import { machineRegistry } from '../../runtime/machines.ts';
import { openMarket } from '../../runtime/market/index.ts';
import { resourceIdOf } from '../../runtime/market/listing-signature.ts';
import type { Db } from '../../storage/db.ts';
import { backendFactories, type Backend } from '../helpers/backends.ts';

const FEE = { USDC: '0x000000000000000000000000000000000000fee5', ANM: 'anm1fee' };

/** Every statement's whole text, as sent (BEGIN for a transaction). */
function recording(db: Db, statements: string[]): Db {
  return {
    ...db,
    kind: db.kind,
    query: (sql, params) => {
      statements.push(sql);
      return db.query(sql, params);
    },
    exec: (sql) => {
      statements.push(sql);
      return db.exec(sql);
    },
    tx: (fn) => {
      statements.push('BEGIN');
      return db.tx(fn);
    },
    close: () => db.close(),
  };
}

describe.each(backendFactories)('SQL statements per quote on %s', (_name, open) => {
  let b: Backend;
  const statements: string[] = [];
  let app: FastifyInstance;

  beforeAll(async () => {
    b = await open();
    const db = recording(b.db, statements);
    const host = new ActorHost({ db, bus: b.bus, registry: machineRegistry() });
    const market = openMarket(db, host, { feeAddresses: FEE });
    const endpoint = 'https://seller.example/weather';
    const id = resourceIdOf('GET', endpoint);
    await host.apply({ kind: 'listing', id }, {
      type: 'listing.register', id: 'r1', at: Date.now(), resource_id: id, provider_id: 'prov_b0b0', name: 'weather service', description: 'A weather API',
      category: 'weather', tags: ['weather'], endpoint, method: 'GET', model: 'per_call',
      assets: [{ asset: 'USDC', pay_to: '0x00000000000000000000000000000000000000a1', seller_price_atomic: '10000' }, { asset: 'ANM', pay_to: 'anm1seller', seller_price_atomic: '10000000' }],
      documentation_url: null, request_schema: null, response_schema: null, example_request: null, example_response: null,
    });
    await market.index.refresh();
    app = await buildMarketApp({ ...market, perIpPerMinute: 1e6 });
  });
  afterAll(async () => {
    await app?.close();
    await b?.close();
  });

  async function quote(asset: 'USDC' | 'ANM'): Promise<{ sql: string[]; intent: string }> {
    statements.length = 0;
    const res = await app.inject({ method: 'POST', url: '/api/v1/route/quote', payload: { capability: 'weather', asset } });
    expect(res.statusCode, res.body).toBe(201);
    return { sql: [...statements], intent: res.json<{ intent_id: string }>().intent_id };
  }

  it('a USDC quote: one statement, the create with its expiry timer', async () => {
    for (let i = 0; i < 3; i++) {
      const { sql, intent } = await quote('USDC');
      expect(sql).toHaveLength(1);
      expect(sql[0]).toMatch(/INSERT INTO actors/);
      // A quote charges nothing: its commit does not wait for the disk (ADR 0064).
      expect(sql[0]).toContain(`set_config('synchronous_commit', 'off', true)`);
      expect((await b.db.query(`SELECT state FROM actors WHERE id = $1`, [intent])).rows).toEqual([{ state: 'QUOTED' }]);
      expect((await b.db.query(`SELECT 1 FROM timers WHERE actor_id = $1 AND name = 'quote'`, [intent])).rowCount).toBe(1);
    }
  });

  it('an ANM quote: one statement that writes its chain reference too', async () => {
    const { sql, intent } = await quote('ANM');
    expect(sql).toHaveLength(1);
    expect(sql[0]).toMatch(/INSERT INTO chain_refs/);
    const refs = await b.db.query<{ reference: string }>(`SELECT reference FROM chain_refs WHERE actor_id = $1`, [intent]);
    expect(refs.rows).toEqual([{ reference: `mp1:${intent}` }]);
  });
});
