/**
 * A regression guard for `npm run bench:market`'s purchase row that no load on the machine can
 * move: the SQL statements `POST /api/v1/purchase` sends, counted at the database port (ADR
 * 0034, 0044). A purchase is the idempotency claim that also reads the purchase actor and, on
 * the simulated ledger in the same database, both legs' authorization states; and the one
 * statement that writes `VERIFIED` (DESIGN §2, optimistic path of ADR 0012) with both legs'
 * nonce bindings and the first response's record: two, where it was eleven, then three. The
 * same holds in a process that did not make the quote (its engine has never seen the actor).
 * A change that adds a round trip fails here.
 */
import type { FastifyInstance } from 'fastify';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildMarketApp } from '../../gateway/market/app.ts';
import { ActorHost } from '../../runtime/engine/actor-host.ts';
import { machineRegistry } from '../../runtime/machines.ts';
import { openMarket, type MarketServices } from '../../runtime/market/index.ts';
import { registerUsdcListing, signLeg } from '../fixtures/market.ts';
import { backendFactories, type Backend } from '../helpers/backends.ts';
import { counting } from '../helpers/counting-db.ts';

const FEE = { USDC: '0x000000000000000000000000000000000000fee5', ANM: 'anm1fee' };
const N = 12;

describe.each(backendFactories)('SQL statements per purchase on %s', (_name, open) => {
  let b: Backend;
  let statements: string[] = [];
  const apps: FastifyInstance[] = [];
  let quoting: MarketServices;
  let buy: (app: FastifyInstance) => Promise<void>;

  beforeAll(async () => {
    b = await open();
    const c = counting(b.db);
    statements = c.statements;
    const host = new ActorHost({ db: c.db, bus: b.bus, registry: machineRegistry() });
    quoting = openMarket(c.db, host, { feeAddresses: FEE });
    await registerUsdcListing(host, privateKeyToAccount(generatePrivateKey()).address);
    await quoting.index.refresh();
    apps.push(await buildMarketApp({ ...quoting, perIpPerMinute: 1e6 }));
    // Another marketplace process over the same database: its engine never saw the quotes.
    const other = openMarket(c.db, new ActorHost({ db: c.db, bus: b.bus, registry: machineRegistry() }), { feeAddresses: FEE });
    apps.push(await buildMarketApp({ ...other, perIpPerMinute: 1e6 }));
    // A process whose engine keeps no rows: every event takes the locked path.
    const locked = openMarket(c.db, new ActorHost({ db: c.db, bus: b.bus, registry: machineRegistry(), cacheSize: 0 }), { feeAddresses: FEE });
    apps.push(await buildMarketApp({ ...locked, perIpPerMinute: 1e6 }));
    const buyer = privateKeyToAccount(generatePrivateKey());
    await quoting.ledger.fund(buyer.address, 10n ** 12n);
    let n = 0;
    buy = async (app) => {
      const q = await quoting.purchases.quote({ capability: 'weather', asset: 'USDC' });
      const legs = q.payment_requirements.accepts[0]!.extra.legs;
      const payment = { legs: { seller: await signLeg(buyer, { to: legs.seller.payTo, value: legs.seller.amount }), fee: await signLeg(buyer, { to: legs.fee.payTo, value: legs.fee.amount }) } };
      const from = statements.length;
      const res = await app.inject({ method: 'POST', url: '/api/v1/purchase', headers: { 'idempotency-key': `rt-${n++}`, 'content-type': 'application/json' }, payload: { intent_id: q.intent_id, payment } });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json<{ status: string }>().status).toBe('VERIFIED');
      // Only the purchase's own statements are kept: the quote's are not the purchase's cost.
      statements.splice(0, from);
    };
  });
  afterAll(async () => {
    for (const app of apps) await app.close();
    await b?.close();
  });

  async function perPurchase(app: FastifyInstance): Promise<Map<string, number>> {
    await buy(app);
    const seen: string[] = [];
    for (let i = 0; i < N; i++) {
      statements.length = 0;
      await buy(app);
      seen.push(...statements);
    }
    const kinds = new Map<string, number>();
    for (const s of seen) kinds.set(s.slice(0, 40), (kinds.get(s.slice(0, 40)) ?? 0) + 1);
    return kinds;
  }

  const total = (kinds: Map<string, number>) => [...kinds.values()].reduce((a, x) => a + x, 0);

  it.each([
    ['in the process that made the quote', 0],
    ['in another process', 1],
  ])('a purchase %s: the claim with the actor and the ledger read, the write with bindings and record', async (_where, app) => {
    const kinds = await perPurchase(apps[app]!);
    const why = [...kinds].join('\n');
    expect(kinds.get('WITH up AS (UPDATE actors SET snapshot ='), why).toBe(N);
    expect(kinds.get('BEGIN'), why).toBeUndefined();
    expect(total(kinds), why).toBe(2 * N);
  });

  it('the write carries what the separate statements wrote: both nonces bound, the response recorded for replay', async () => {
    statements.length = 0;
    await buy(apps[0]!);
    const intent = (await b.db.query<{ id: string }>(`SELECT id FROM actors WHERE kind = 'purchase' AND state = 'VERIFIED' ORDER BY updated_at DESC LIMIT 1`)).rows[0]!.id;
    const bound = await b.db.query<{ leg: string }>(`SELECT leg FROM market_leg_nonces WHERE intent_id = $1 ORDER BY leg`, [intent]);
    expect(bound.rows.map((r) => r.leg)).toEqual(['fee', 'seller']);
    const kept = await b.db.query<{ state: string; status: number }>(`SELECT state, status FROM idempotency_keys WHERE merchant = $1 AND mode = 'market'`, [intent]);
    expect(kept.rows).toEqual([{ state: 'done', status: 200 }]);
  });

  it('on the locked path too, the bindings and the record ride on the write', async () => {
    statements.length = 0;
    await buy(apps[2]!);
    expect(statements.map((s) => s.slice(0, 26))).toEqual([
      'WITH c AS (INSERT INTO ide',
      'BEGIN',
      'SELECT version, state, sna',
      'WITH pe AS (INSERT INTO pr',
      'COMMIT',
    ]);
    const intent = (await b.db.query<{ id: string }>(`SELECT id FROM actors WHERE kind = 'purchase' AND state = 'VERIFIED' ORDER BY updated_at DESC LIMIT 1`)).rows[0]!.id;
    expect((await b.db.query(`SELECT 1 FROM market_leg_nonces WHERE intent_id = $1`, [intent])).rowCount).toBe(2);
    expect((await b.db.query(`SELECT 1 FROM idempotency_keys WHERE merchant = $1 AND state = 'done'`, [intent])).rowCount).toBe(1);
  });

  it('nonces its own earlier attempt bound: the write refuses them, they are bound again and the purchase is VERIFIED', async () => {
    const buyer = privateKeyToAccount(generatePrivateKey());
    await quoting.ledger.fund(buyer.address, 10n ** 9n);
    const q = await quoting.purchases.quote({ capability: 'weather', asset: 'USDC' });
    const l = q.payment_requirements.accepts[0]!.extra.legs;
    const legs = { seller: await signLeg(buyer, { to: l.seller.payTo, value: l.seller.amount }), fee: await signLeg(buyer, { to: l.fee.payTo, value: l.fee.amount }) };
    const p = (await quoting.purchases.read(q.intent_id))!;
    await quoting.purchases.bind('USDC', q.intent_id, await quoting.purchases.verifyLeg(p.ctx, 'seller', legs.seller), 'seller');
    statements.length = 0;
    const res = await apps[0]!.inject({ method: 'POST', url: '/api/v1/purchase', headers: { 'idempotency-key': 'rebound', 'content-type': 'application/json' }, payload: { intent_id: q.intent_id, payment: { legs } } });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json<{ status: string }>().status).toBe('VERIFIED');
    // The claim with the ledger read, the refused write, the binding on its own, the write with the record only.
    expect(statements.map((s) => s.slice(0, 26))).toEqual([
      'WITH c AS (INSERT INTO ide',
      'WITH up AS (UPDATE actors ',
      'WITH x AS (SELECT * FROM u',
      'WITH up AS (UPDATE actors ',
    ]);
    const bound = await b.db.query<{ leg: string }>(`SELECT leg FROM market_leg_nonces WHERE intent_id = $1 ORDER BY leg`, [q.intent_id]);
    expect(bound.rows.map((r) => r.leg)).toEqual(['fee', 'seller']);
    const replay = await apps[0]!.inject({ method: 'POST', url: '/api/v1/purchase', headers: { 'idempotency-key': 'rebound', 'content-type': 'application/json' }, payload: { intent_id: q.intent_id, payment: { legs } } });
    expect(replay.headers['idempotent-replay']).toBe('true');
    expect(replay.body).toBe(res.body);
  });
});
