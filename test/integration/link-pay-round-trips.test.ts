/**
 * A regression guard for `npm run bench:links`'s Pay row that no load on the machine can move
 * (ADR 0047): every SQL statement a press of Pay costs, counted at the database port, the
 * hold's creation through the outbox included. A press on a limited link is the link's lookup
 * (which takes the buyer's Pay token too), the take on the link, the intent's create, and,
 * after the 303, the hold's create by the actor consumer; each write is one statement and
 * writes one actor. The outbox relay's claims are shared by the rows they publish, so they are
 * only checked to be whole claims; upkeep on timers of its own (the relay's pruning, the API
 * gate's leases) may fall inside the run. Any other statement fails the guard.
 */
import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../gateway/app.ts';
import { openCommerceServices } from '../../runtime/commerce/index.ts';
import { machineRegistry } from '../../runtime/machines.ts';
import { Engine } from '../../runtime/engine/runtime.ts';
import { openMerchantServices } from '../../runtime/merchant/index.ts';
import { backendFactories, waitFor, type Backend } from '../helpers/backends.ts';
import { counting } from '../helpers/counting-db.ts';
import type { Db, SqlParam } from '../../storage/db.ts';

const N = 12;

/** What a statement is, by its first 60 characters (test/helpers/counting-db.ts). */
function kindOf(s: string): string {
  if (s.startsWith('WITH l AS (SELECT a.id')) return 'lookup';
  if (s.startsWith('WITH up AS (UPDATE actors')) return 'update';
  if (s.startsWith('WITH a AS (INSERT INTO actors')) return 'create';
  // Creates of one kind sent in the same turn, written together (ADR 0089).
  if (s.startsWith('WITH x AS (SELECT * FROM jsonb_to_recordset')) return 'creates';
  if (s === 'BEGIN' || s === 'COMMIT') return s;
  if (s.startsWith("SELECT set_config('plan_cache_mode'")) return 'relay-xmin';
  if (s.startsWith("WITH async AS (SELECT set_config('synchronous_commit'")) return 'relay-claim';
  // The API gate settling the leases the links' creation took (once a second, not per press).
  if (s.startsWith('SELECT * FROM anm_lease_settle(')) return 'lease-upkeep';
  if (s.startsWith('DELETE FROM outbox WHERE published_at <')) return 'relay-prune';
  return s;
}

/**
 * While `held` is set, the link's takes wait for it: presses that arrive meanwhile find a take in
 * flight, as they do under load, whatever the machine's timing.
 */
let held: Promise<void> | null = null;
let lookupsDone = 0;
function gated(db: Db): Db {
  return {
    ...db,
    query: async <Row,>(sql: string, params?: readonly SqlParam[]) => {
      if (held && sql.startsWith('WITH up AS (UPDATE actors')) await held;
      const r = await db.query<Row>(sql, params);
      if (sql.startsWith('WITH l AS (SELECT a.id')) lookupsDone++;
      return r;
    },
  };
}

describe.each(backendFactories)('SQL statements per press of Pay on %s', (_name, open) => {
  let b: Backend;
  let app: FastifyInstance;
  let engine: Engine;
  let statements: string[] = [];
  const paths: Record<'limited' | 'unlimited', string> = { limited: '', unlimited: '' };

  beforeAll(async () => {
    b = await open();
    const c = counting(b.db);
    statements = c.statements;
    c.db = gated(c.db);
    const config = { ANMPAY_DATA_DIR: '.data', ANMPAY_KEY_PEPPER: randomBytes(24).toString('hex'), ANMPAY_OPERATOR_TOKEN: `opt_${randomBytes(16).toString('hex')}`, RATE_SOURCE_URL: undefined, RATE_LIMIT_KEY_PER_MIN: 1e6, RATE_LIMIT_KEY_BURST: 1e6, RATE_LIMIT_IP_PER_MIN: 1e6, RATE_LIMIT_IP_BURST: 1e6 };
    const services = await openMerchantServices(c.db, config, { demo: false });
    // The relay and the actor consumer on the counted connection too: the hold is created by them.
    engine = new Engine({ db: c.db, bus: b.bus, registry: machineRegistry() });
    await engine.start({ sweeper: false, feed: false });
    const commerce = openCommerceServices(c.db, { payPerIpPerMinute: 1e6 });
    app = await buildApp({ ...services, commerce, host: engine.host, baseUrl: () => 'http://127.0.0.1', dbHealthy: async () => true, lifecycle: { draining: false } });
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
    await engine?.stop();
    await b?.close();
  });

  async function press(p: string): Promise<void> {
    const res = await app.inject({ method: 'POST', url: p, headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: '' });
    expect(res.statusCode, res.body).toBe(303);
  }

  /** Every press has its hold and the outbox is published: nothing of the presses is left to run. */
  async function settled(): Promise<void> {
    const count = async (sql: string) => (await b.db.query<{ n: number }>(sql)).rows[0]!.n;
    await waitFor(async () => {
      const pressed = await count(`SELECT count(*)::int AS n FROM actors WHERE kind = 'payment_intent' AND snapshot->'context'->'metadata' ? 'hold'`);
      const held = await count(`SELECT count(*)::int AS n FROM actors WHERE kind = 'link_hold'`);
      const waiting = await count(`SELECT count(*)::int AS n FROM outbox WHERE published_at IS NULL`);
      return held === pressed && waiting === 0;
    }, 20_000, 'every hold created and every outbox row published');
  }

  it.each([
    ['limited', { lookup: 1, update: 1, create: 2 }],
    ['unlimited', { lookup: 1, update: 0, create: 1 }],
  ] as const)('a press on a %s link costs exactly its own statements', async (which, perPress) => {
    await press(paths[which]);
    await settled();
    statements.length = 0;
    for (let i = 0; i < N; i++) await press(paths[which]);
    await settled();
    const seen = statements.map(kindOf);
    const why = statements.join('\n');
    const n = (k: string) => seen.filter((s) => s === k).length;
    expect({ lookup: n('lookup'), update: n('update'), create: n('create') }, why).toEqual({ lookup: N * perPress.lookup, update: N * perPress.update, create: N * perPress.create });
    // The relay's claims, each a transaction of BEGIN, its oldest running xid, the claim and
    // COMMIT; it polls on its own, so one may have begun before the count and one end after.
    const relay = ['BEGIN', 'relay-xmin', 'relay-claim', 'COMMIT'].map(n);
    expect(Math.max(...relay) - Math.min(...relay), why).toBeLessThanOrEqual(1);
    // Upkeep on timers of its own, not per press: the relay's pruning (once a minute) and the API gate's leases.
    expect(n('relay-prune') + n('lease-upkeep'), why).toBeLessThanOrEqual(3);
    const known = new Set(['lookup', 'update', 'create', 'BEGIN', 'COMMIT', 'relay-xmin', 'relay-claim', 'relay-prune', 'lease-upkeep']);
    expect(statements.filter((_, i) => !known.has(seen[i]!))).toEqual([]);
  });

  it('presses on one link at once share its takes: the takes that wait for the one in flight are one statement', async () => {
    await press(paths.limited);
    await settled();
    statements.length = 0;
    lookupsDone = 0;
    // The first take waits until every press has its lookup, and the presses' takes are posted.
    held = waitFor(async () => lookupsDone >= N, 20_000, 'every lookup').then(() => new Promise((r) => setTimeout(r, 50)));
    await Promise.all(Array.from({ length: N }, () => press(paths.limited)));
    held = null;
    await settled();
    const seen = statements.map(kindOf);
    const n = (k: string) => seen.filter((s) => s === k).length;
    // Each press still has its lookup, intent and hold (intents created in one turn share a
    // statement, ADR 0089); the link is written fewer times than pressed.
    expect(n('lookup')).toBe(N);
    expect(n('create') + n('creates'), statements.join('\n')).toBeLessThanOrEqual(2 * N);
    // The first take alone, the other eleven in the next step of the link: one per press before.
    expect(n('update'), statements.join('\n')).toBeLessThanOrEqual(2);
    const link = await b.db.query<{ held: number; journal: number }>(
      `SELECT (a.snapshot->'context'->>'units_held')::int AS held, (SELECT count(*)::int FROM actor_events e WHERE e.actor_id = a.id AND e.event->>'type' = 'link.hold.take') AS journal
         FROM actors a WHERE a.kind = 'payment_link' AND a.snapshot->'context'->>'units_total' IS NOT NULL`,
    );
    const holds = await b.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM actors WHERE kind = 'link_hold'`);
    expect(link.rows).toEqual([{ held: holds.rows[0]!.n, journal: holds.rows[0]!.n }]);
  });

  it("the Pay token's commit does not wait for the disk: its bucket is unlogged (a crash gives a buyer a press back)", async () => {
    const r = await b.db.query<{ p: string }>(`SELECT relpersistence AS p FROM pg_class WHERE oid = 'rate_buckets'::regclass`);
    expect(r.rows).toEqual([{ p: 'u' }]);
  });
});
