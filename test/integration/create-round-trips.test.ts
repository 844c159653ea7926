/**
 * A regression guard for `npm run bench:api` that no load on the machine can move: the SQL
 * statements the merchant API sends per create and per read, counted at the database port.
 * Once a key is known and its leases hold tokens (ADR 0004), a create is one gate round trip
 * (the Idempotency-Key claim, ADR 0005) and one statement that creates the actor with its
 * journal, timer, outbox rows and recorded response (DESIGN §2, ADR 0012); a read is one gate
 * round trip that also reads the intent. A change that adds a round trip to either path fails
 * here before it shows as a slower bench (docs/benchmarks.md, "API").
 */
import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../gateway/app.ts';
import { ActorHost } from '../../runtime/engine/actor-host.ts';
import { machineRegistry } from '../../runtime/machines.ts';
import { openMerchantServices } from '../../runtime/merchant/index.ts';
import { backendFactories, type Backend } from '../helpers/backends.ts';
import { counting } from '../helpers/counting-db.ts';

const HIGH = { RATE_LIMIT_KEY_PER_MIN: 1e6, RATE_LIMIT_KEY_BURST: 1e6, RATE_LIMIT_IP_PER_MIN: 1e6, RATE_LIMIT_IP_BURST: 1e6 };
const N = 20;

describe.each(backendFactories)('SQL statements per request on %s', (_name, open) => {
  let b: Backend;
  let app: FastifyInstance;
  let key = '';
  let statements: string[] = [];
  let n = 0;

  beforeAll(async () => {
    b = await open();
    const c = counting(b.db);
    statements = c.statements;
    const config = { ANMPAY_DATA_DIR: '.data', ANMPAY_KEY_PEPPER: randomBytes(24).toString('hex'), ANMPAY_OPERATOR_TOKEN: `opt_${randomBytes(16).toString('hex')}`, RATE_SOURCE_URL: undefined, ...HIGH };
    const services = await openMerchantServices(c.db, config, { demo: false });
    const host = new ActorHost({ db: c.db, bus: b.bus, registry: machineRegistry() });
    app = await buildApp({ ...services, host, baseUrl: () => 'http://127.0.0.1', dbHealthy: async () => true, lifecycle: { draining: false } });
    key = (await services.merchants.create({ name: 'Round trips' })).keys.test.secret;
  });
  afterAll(async () => {
    await app?.close();
    await b?.close();
  });

  const create = async () => {
    const res = await app.inject({
      method: 'POST',
      url: '/api/v1/payment-intents',
      headers: { authorization: `Bearer ${key}`, 'idempotency-key': `rt-${n++}`, 'content-type': 'application/json' },
      payload: `{"amount":"1.25","description":"round trips","metadata":{"n":${n}}}`,
    });
    expect(res.statusCode).toBe(201);
    return res.json<{ id: string }>().id;
  };

  /** Statements sent while `work` runs sequentially `N` times, by their first words. */
  async function perRequest(work: () => Promise<unknown>): Promise<{ total: number; kinds: Map<string, number> }> {
    // The first request of a key reads the key and takes leases: not what every request pays.
    await work();
    await work();
    statements.length = 0;
    for (let i = 0; i < N; i++) await work();
    const kinds = new Map<string, number>();
    for (const s of statements) kinds.set(s.slice(0, 30), (kinds.get(s.slice(0, 30)) ?? 0) + 1);
    return { total: statements.length, kinds };
  }

  it('a create is the claim round trip and the one statement that creates the actor', async () => {
    const { total, kinds } = await perRequest(create);
    const inserts = statements.filter((s) => s.startsWith('WITH a AS (INSERT INTO actors')).length;
    expect(inserts, [...kinds].join('\n')).toBe(N);
    // A lease renewal may fall inside the run; nothing else may.
    expect(total, [...kinds].join('\n')).toBeLessThanOrEqual(2 * N + 2);
    expect(total).toBeGreaterThanOrEqual(2 * N);
  });

  it('a read is one round trip', async () => {
    const id = await create();
    const read = async () => {
      const res = await app.inject({ method: 'GET', url: `/api/v1/payment-intents/${id}`, headers: { authorization: `Bearer ${key}` } });
      expect(res.statusCode).toBe(200);
    };
    const { total, kinds } = await perRequest(read);
    expect(total, [...kinds].join('\n')).toBeLessThanOrEqual(N + 2);
    expect(total).toBeGreaterThanOrEqual(N);
  });
});
