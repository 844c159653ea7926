/**
 * Creates of one shape submitted in the same turn are written in one statement (ADR 0089),
 * each actor still whole with its journal, timers and outbox rows (DESIGN §2 "One transaction
 * per event"): the rows are exactly those of the same creates written one by one, and so is
 * every caller's answer, an actor that exists already included.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ActorHost } from '../../runtime/engine/actor-host.ts';
import type { CreateCompanion } from '../../runtime/engine/actor-types.ts';
import { MachineRegistry } from '../../runtime/engine/registry.ts';
import { machineRegistry } from '../../runtime/machines.ts';
import type { Db } from '../../storage/db.ts';
import { backendFactories, type Backend } from '../helpers/backends.ts';
import { counting } from '../helpers/counting-db.ts';
import { orderDefinition } from '../fixtures/order-machine.ts';

const T0 = 1_700_000_000_000;
const order = (id: string, kind = 'order') => ({ kind, id, merchant: 'm_1', mode: 'test' as const });
const createEv = (id: string, i = 0) => ({ type: 'order.create', id, at: T0 + i, ttl_ms: 60_000 + i });
const tally = { ...orderDefinition, kind: 'tally' };
const BATCH_SQL = 'WITH x AS (SELECT * FROM jsonb_to_recordset';
const ONE_SQL = 'WITH a AS (INSERT INTO actors';

/** Writes (actor id, note) into companion_log with its create: a caller's own companion. */
const logging: CreateCompanion = {
  name: 'log',
  arity: 1,
  cte: (n) => `log AS (INSERT INTO companion_log (actor_id, note) SELECT $1, $${n}::text WHERE EXISTS (SELECT 1 FROM pe))`,
  params: () => ['caller'],
};

/** Every row a create writes, in an order that does not depend on the order of the writes. */
async function rows(db: Db) {
  const all = async (sql: string) => (await db.query(sql)).rows;
  return {
    actors: await all(`SELECT id, kind, merchant, mode, machine, machine_version, state, snapshot, version FROM actors ORDER BY id`),
    journal: await all(`SELECT actor_id, seq, event_id, event, state_before, state_after, at FROM actor_events ORDER BY actor_id, seq`),
    dedupe: await all(`SELECT actor_id, event_id, outcome, seq FROM processed_events ORDER BY actor_id, event_id`),
    timers: await all(`SELECT actor_id, name, kind, event_type, fire_at, generation, fired_at FROM timers ORDER BY actor_id, name`),
    outbox: await all(`SELECT actor_id, msg_id, subject, payload, published_at FROM outbox ORDER BY actor_id, msg_id`),
    refs: await all(`SELECT reference, network, actor_id, kind, recipient, treasury, required FROM chain_refs ORDER BY reference, actor_id`),
  };
}

describe.each(backendFactories)('creates written together on %s', (_name, open) => {
  let batched: Backend;
  let alone: Backend;
  let statements: string[];
  let texts: string[];
  const hosts = (registry: () => MachineRegistry) => {
    const c = counting(batched.db);
    statements = c.statements;
    texts = c.texts;
    return {
      together: new ActorHost({ db: c.db, bus: batched.bus, registry: registry() }),
      oneByOne: new ActorHost({ db: alone.db, bus: alone.bus, registry: registry(), createBatch: 1 }),
    };
  };
  const orders = () => new MachineRegistry([orderDefinition, tally]);

  beforeEach(async () => {
    [batched, alone] = await Promise.all([open(), open()]);
    for (const b of [batched, alone]) await b.db.query(`CREATE TABLE companion_log (actor_id text NOT NULL, note text NOT NULL)`);
  });
  afterEach(async () => Promise.all([batched.close(), alone.close()]));

  it('50 creates in one turn are one statement and write the rows the same creates write one by one', async () => {
    const { together, oneByOne } = hosts(orders);
    const ids = Array.from({ length: 50 }, (_, i) => `o${String(i).padStart(3, '0')}`);
    const results = await Promise.all(ids.map((id, i) => together.apply(order(id), createEv(`${id}:create`, i))));
    expect(statements).toHaveLength(1);
    expect(statements[0]).toContain(BATCH_SQL);
    const expected = [];
    for (const [i, id] of ids.entries()) expected.push(await oneByOne.apply(order(id), createEv(`${id}:create`, i)));
    expect(results).toEqual(expected);
    expect(await rows(batched.db)).toEqual(await rows(alone.db));
    // The actors are the host's own afterwards: an event takes the optimistic path, as after a lone create.
    statements.length = 0;
    expect(await together.apply(order('o007'), { type: 'order.add', id: 'o007:add', at: T0 + 99, n: 2 })).toMatchObject({ outcome: 'applied', version: 2 });
    expect(statements).toHaveLength(1);
  });

  it('a batch holds at most 64 creates; a lone create is the statement of one create, as before', async () => {
    const { together } = hosts(orders);
    await Promise.all(Array.from({ length: 100 }, (_, i) => together.apply(order(`c${i}`), createEv(`c${i}:create`, i))));
    expect(statements).toEqual([expect.stringContaining(BATCH_SQL), expect.stringContaining(BATCH_SQL)]);
    // An actor's created_at is its transaction's start: one value per statement.
    const sizes = await batched.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM actors GROUP BY created_at ORDER BY n`);
    expect(sizes.rows.map((r) => r.n)).toEqual([36, 64]);
    statements.length = 0;
    await together.apply(order('single'), createEv('single:create'));
    expect(statements).toEqual([expect.stringContaining(ONE_SQL)]);
  });

  it('an actor that exists fails the batch, which writes nothing; each create alone then answers as one by one would', async () => {
    const { together, oneByOne } = hosts(orders);
    for (const host of [together, oneByOne]) {
      await host.apply(order('dup'), createEv('dup:create'));
      await host.apply(order('taken'), createEv('taken:create'));
    }
    statements.length = 0;
    const run = (host: ActorHost) => [
      ...Array.from({ length: 10 }, (_, i) => () => host.apply(order(`n${i}`), createEv(`n${i}:create`, i))),
      // The same create again (a duplicate), and another create of an existing actor (not applied to it).
      () => host.apply(order('dup'), createEv('dup:create')),
      () => host.apply(order('taken'), createEv('taken:again', 5)),
      // The same new actor twice in one turn: one applied, one duplicate.
      () => host.apply(order('twice'), createEv('twice:create')),
      () => host.apply(order('twice'), createEv('twice:create')),
    ];
    const results = await Promise.all(run(together).map((f) => f()));
    const expected = [];
    for (const f of run(oneByOne)) expected.push(await f());
    // Which of the two creates of one new actor comes first is a race, one by one as together.
    const inOrder = (rs: typeof results) => [...rs.slice(0, 12), ...rs.slice(12).sort((a, b) => a.outcome.localeCompare(b.outcome))];
    expect(inOrder(results).map((r) => r.outcome)).toEqual([...Array<string>(10).fill('applied'), 'duplicate', 'ignored', 'applied', 'duplicate']);
    expect(inOrder(results)).toEqual(inOrder(expected));
    expect(await rows(batched.db)).toEqual(await rows(alone.db));
    expect(statements.filter((s) => s.startsWith(BATCH_SQL.slice(0, 60)))).toHaveLength(1);
  });

  it("creates of other shapes in the same turn go in batches of their own, and a caller's companion alone", async () => {
    const { together, oneByOne } = hosts(orders);
    const run = (host: ActorHost) => [
      ...[0, 1, 2].map((i) => () => host.apply(order(`o${i}`), createEv(`o${i}:create`, i))),
      ...[0, 1, 2].map((i) => () => host.apply(order(`t${i}`, 'tally'), createEv(`t${i}:create`, i))),
      () => host.apply(order('with-log'), createEv('with-log:create'), logging),
      () => host.apply(order('o9'), createEv('o9:create', 9)),
    ];
    const results = await Promise.all(run(together).map((f) => f()));
    const expected = [];
    for (const f of run(oneByOne)) expected.push(await f());
    expect(results).toEqual(expected);
    expect(results[6]).toMatchObject({ outcome: 'applied', companionWritten: true });
    expect(await rows(batched.db)).toEqual(await rows(alone.db));
    expect((await batched.db.query(`SELECT actor_id, note FROM companion_log`)).rows).toEqual([{ actor_id: 'with-log', note: 'caller' }]);
    const sent = statements.map((s) => (s.startsWith(BATCH_SQL.slice(0, 60)) ? 'batch' : s.startsWith(ONE_SQL) ? 'one' : s));
    expect(sent.sort()).toEqual(['batch', 'batch', 'one']);
    // One batch per kind: each statement holds only its own kind's creates.
    const batches = texts.filter((t) => t.startsWith('WITH x AS'));
    expect(batches).toHaveLength(2);
    const kinds = await batched.db.query<{ kind: string; n: string }>(`SELECT kind, count(*)::text AS n FROM actors GROUP BY kind ORDER BY kind`);
    expect(kinds.rows).toEqual([{ kind: 'order', n: '5' }, { kind: 'tally', n: '3' }]);
  });

  it('quotes on both lanes in one turn: purchases with their expiry timers and chain references, committed without waiting for the flush', async () => {
    const { together, oneByOne } = hosts(machineRegistry);
    const quote = (i: number) => {
      const asset = i % 2 === 0 ? 'USDC' : 'ANM';
      const intent = `pi_${i.toString(36).padStart(6, '0')}`;
      return {
        target: { kind: 'purchase', id: intent },
        event: {
          type: 'purchase.quote', id: `quote:${intent}`, at: T0 + i, intent_id: intent, resource_id: `res_${i % 3}`, asset,
          network: asset === 'USDC' ? 'eip155:8453' : 'native:1', scheme: asset === 'USDC' ? 'exact-split' : 'exact-anm-split',
          seller: { pay_to: `seller${i}`, amount: '10000' }, fee: { pay_to: 'fee', amount: '50' }, total: '10050', fee_bps: 50,
          expires_at: T0 + i + 300_000, ...(asset === 'ANM' && { required_confirmations: 12 }), seller_x402_version: 2,
        },
      };
    };
    const quotes = Array.from({ length: 40 }, (_, i) => quote(i));
    const results = await Promise.all(quotes.map((q) => together.apply(q.target, q.event)));
    const expected = [];
    for (const q of quotes) expected.push(await oneByOne.apply(q.target, q.event));
    expect(results).toEqual(expected);
    expect(statements).toEqual([expect.stringContaining(BATCH_SQL)]);
    expect(texts[0]).toContain(`set_config('synchronous_commit', 'off', true)`);
    const got = await rows(batched.db);
    expect(got).toEqual(await rows(alone.db));
    expect([got.actors.length, got.timers.length, got.refs.length]).toEqual([40, 40, 20]);
  });
});
