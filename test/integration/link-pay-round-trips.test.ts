/**
 * A regression guard for `npm run bench:links`'s Pay row that no load on the machine can move
 * (ADR 0047): the SQL statements a press of Pay sends, counted at the database port. A press is
 * the link's lookup (which takes the buyer's Pay token too) and one statement that takes the
 * unit on the link, creates the hold the take sends and creates the intent: two, as a create
 * is, where it was three and a trip through the bus. The hold is `HELD` when the 303 answers, and its creation left no outbox row to relay.
 */
import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../gateway/app.ts';
import { openCommerceServices } from '../../runtime/commerce/index.ts';
import { ActorHost } from '../../runtime/engine/actor-host.ts';
import { machineRegistry } from '../../runtime/machines.ts';
import { openMerchantServices } from '../../runtime/merchant/index.ts';
import { backendFactories, type Backend } from '../helpers/backends.ts';
import { counting } from '../helpers/counting-db.ts';

const N = 12;

describe.each(backendFactories)('SQL statements per press of Pay on %s', (_name, open) => {
  let b: Backend;
  let app: FastifyInstance;
  let statements: string[] = [];
  const paths: Record<'limited' | 'unlimited', string> = { limited: '', unlimited: '' };

  beforeAll(async () => {
    b = await open();
    const c = counting(b.db);
    statements = c.statements;
    const config = { ANMPAY_DATA_DIR: '.data', ANMPAY_KEY_PEPPER: randomBytes(24).toString('hex'), ANMPAY_OPERATOR_TOKEN: `opt_${randomBytes(16).toString('hex')}`, RATE_SOURCE_URL: undefined, RATE_LIMIT_KEY_PER_MIN: 1e6, RATE_LIMIT_KEY_BURST: 1e6, RATE_LIMIT_IP_PER_MIN: 1e6, RATE_LIMIT_IP_BURST: 1e6 };
    const services = await openMerchantServices(c.db, config, { demo: false });
    const host = new ActorHost({ db: c.db, bus: b.bus, registry: machineRegistry() });
    const commerce = openCommerceServices(c.db, { payPerIpPerMinute: 1e6 });
    app = await buildApp({ ...services, commerce, host, baseUrl: () => 'http://127.0.0.1', dbHealthy: async () => true, lifecycle: { draining: false } });
    const m = await services.merchants.create({ name: 'Round trips' });
    await services.merchants.setPayoutAddress(m.merchant_id, 'live', 'anm1roundtrippayout');
    for (const [slug, units] of [['limited', 1000], ['unlimited', null]] as const) {
      const res = await app.inject({ method: 'POST', url: '/api/v1/payment-links', headers: { authorization: `Bearer ${m.keys.live.secret}` }, payload: { slug, title: slug, amount: '1.25', units_total: units } });
      expect(res.statusCode, res.body).toBe(201);
      paths[slug] = new URL(res.json<{ url: string }>().url).pathname;
    }
  });
  afterAll(async () => {
    await app?.close();
    await b?.close();
  });

  async function press(p: string): Promise<string> {
    const res = await app.inject({ method: 'POST', url: p, headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: '' });
    expect(res.statusCode, res.body).toBe(303);
    return res.headers.location!.replace('/c/', '');
  }

  it.each(['limited', 'unlimited'] as const)('a press on a %s link is the link read and one write', async (which) => {
    await press(paths[which]);
    statements.length = 0;
    for (let i = 0; i < N; i++) await press(paths[which]);
    const why = statements.join('\n');
    const reads = statements.filter((s) => s.startsWith('WITH l AS (SELECT'));
    const writes = statements.filter((s) => s.startsWith('WITH up AS (UPDATE actors') || s.startsWith('WITH a AS (INSERT INTO actors'));
    expect([reads.length, writes.length], why).toEqual([N, N]);
    expect(statements.filter((s) => s.startsWith('BEGIN')), why).toEqual([]);
    // The merchant services' own upkeep (a lease renewal) may fall inside the run; nothing else may.
    expect(statements.length, why).toBeLessThanOrEqual(2 * N + 2);
  });

  it('the hold is HELD when the 303 answers, and nothing of it waits in the outbox', async () => {
    const intent = await press(paths.limited);
    const hold = (await b.db.query<{ hold: string }>(`SELECT snapshot->'context'->'metadata'->>'hold' AS hold FROM actors WHERE id = $1`, [intent])).rows[0]!.hold;
    const row = await b.db.query<{ state: string }>(`SELECT state FROM actors WHERE id = $1`, [hold]);
    expect(row.rows).toEqual([{ state: 'HELD' }]);
    const sent = await b.db.query(`SELECT 1 FROM outbox WHERE subject LIKE 'actor.link_hold.%'`);
    expect(sent.rowCount).toBe(0);
  });
});
