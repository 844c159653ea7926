/**
 * Events for different actors taken on the optimistic path in the same turn are written in one
 * statement (ADR 0090), each actor's version and dedupe checked on its own (DESIGN §2 "One
 * transaction per event", "optimistic path"): the rows and answers are exactly those of the same
 * events written one by one, an actor whose row moved on and a refused companion included.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ActorHost } from '../../runtime/engine/actor-host.ts';
import type { CreateCompanion } from '../../runtime/engine/actor-types.ts';
import { CompanionRefusedError } from '../../runtime/engine/errors.ts';
import { MachineRegistry } from '../../runtime/engine/registry.ts';
import type { Db } from '../../storage/db.ts';
import { backendFactories, type Backend } from '../helpers/backends.ts';
import { counting } from '../helpers/counting-db.ts';
import { orderDefinition } from '../fixtures/order-machine.ts';

const T0 = 1_700_000_000_000;
const order = (id: string) => ({ kind: 'order', id, merchant: 'm_1', mode: 'test' as const });
const createEv = (id: string, i = 0) => ({ type: 'order.create', id: `${id}:create`, at: T0 + i, ttl_ms: 60_000 + i });
const addEv = (id: string, i = 0, tag = 'add') => ({ type: 'order.add', id: `${id}:${tag}`, at: T0 + 1_000 + i, n: i + 1 });
const closeEv = (id: string, i = 0) => ({ type: 'order.close', id: `${id}:close`, at: T0 + 2_000 + i });
const BATCH_SQL = 'WITH ev AS (SELECT * FROM jsonb_to_recordset';
const ONE_SQL = 'WITH up AS (UPDATE actors SET snapshot =';

/** A note written with the event, unique across actors, as a nonce binding is (a caller's companion with a batch form). */
const noting = (note: string): CreateCompanion => ({
  name: 'note',
  arity: 1,
  cte: (n) => `log AS (INSERT INTO companion_log (actor_id, note) SELECT $1, $${n}::text WHERE EXISTS (SELECT 1 FROM pe))`,
  params: () => [note],
  unique: ['companion_log_note_key'],
  batch: {
    cte: (n, applied) => `log AS (INSERT INTO companion_log (actor_id, note)
      SELECT r.actor_id, r.note FROM jsonb_to_recordset($${n}::jsonb) AS r(actor_id text, note text) WHERE r.actor_id IN (SELECT actor_id FROM ${applied!}))`,
    rows: (r) => [[{ actor_id: r.actorId, note }]],
  },
});

/** Every row an event writes, in an order that does not depend on the order of the writes. */
async function rows(db: Db) {
  const all = async (sql: string) => (await db.query(sql)).rows;
  return {
    actors: await all(`SELECT id, state, snapshot, version FROM actors ORDER BY id`),
    journal: await all(`SELECT actor_id, seq, event_id, event, state_before, state_after, at FROM actor_events ORDER BY actor_id, seq`),
    dedupe: await all(`SELECT actor_id, event_id, outcome, seq FROM processed_events ORDER BY actor_id, event_id`),
    timers: await all(`SELECT actor_id, name, kind, event_type, fire_at, generation, fired_at FROM timers ORDER BY actor_id, name`),
    outbox: await all(`SELECT actor_id, msg_id, subject, payload, published_at FROM outbox ORDER BY actor_id, msg_id`),
    notes: await all(`SELECT actor_id, note FROM companion_log ORDER BY actor_id, note`),
  };
}

describe.each(backendFactories)('optimistic writes of different actors together on %s', (_name, open) => {
  let batched: Backend;
  let alone: Backend;
  let statements: string[];
  let together: ActorHost;
  let oneByOne: ActorHost;
  const registry = () => new MachineRegistry([orderDefinition]);
  const ids = (n: number) => Array.from({ length: n }, (_, i) => `o${String(i).padStart(3, '0')}`);

  beforeEach(async () => {
    [batched, alone] = await Promise.all([open(), open()]);
    for (const b of [batched, alone]) await b.db.query(`CREATE TABLE companion_log (actor_id text NOT NULL, note text NOT NULL UNIQUE)`);
    const c = counting(batched.db);
    statements = c.statements;
    together = new ActorHost({ db: c.db, bus: batched.bus, registry: registry() });
    oneByOne = new ActorHost({ db: alone.db, bus: alone.bus, registry: registry(), createBatch: 1, updateBatch: 1 });
  });
  afterEach(async () => Promise.all([batched.close(), alone.close()]));

  async function created(n: number): Promise<string[]> {
    const all = ids(n);
    for (const host of [together, oneByOne]) await Promise.all(all.map((id, i) => host.apply(order(id), createEv(id, i))));
    statements.length = 0;
    return all;
  }

  it('30 events in one turn are one statement, with the answers and rows (journal, dedupe, outbox, timers, companions) of one by one', async () => {
    const all = await created(30);
    const add = (host: ActorHost) => all.map((id, i) => () => host.apply(order(id), addEv(id, i), noting(`n${i}`)));
    const results = await Promise.all(add(together).map((f) => f()));
    expect(statements).toEqual([expect.stringContaining(BATCH_SQL)]);
    const expected = [];
    for (const f of add(oneByOne)) expected.push(await f());
    expect(results).toEqual(expected);
    expect(results.every((r) => r.outcome === 'applied' && r.version === 2 && r.companionWritten === true)).toBe(true);
    // Timers deleted too (the expiry), and the same events again are duplicates, as one by one.
    statements.length = 0;
    const close = (host: ActorHost) => all.map((id, i) => () => host.apply(order(id), closeEv(id, i)));
    const closed = await Promise.all(close(together).map((f) => f()));
    expect(statements).toEqual([expect.stringContaining(BATCH_SQL)]);
    const closedOne = [];
    for (const f of close(oneByOne)) closedOne.push(await f());
    expect(closed).toEqual(closedOne);
    expect(await rows(batched.db)).toEqual(await rows(alone.db));
    const again = await Promise.all(add(together).map((f) => f()));
    expect(again.map((r) => r.outcome)).toEqual(Array<string>(30).fill('duplicate'));
  });

  it('a batch holds at most 64 writes; a lone write is the statement of one write, as before', async () => {
    const all = await created(100);
    await Promise.all(all.map((id, i) => together.apply(order(id), addEv(id, i))));
    expect(statements).toEqual([expect.stringContaining(BATCH_SQL), expect.stringContaining(BATCH_SQL)]);
    statements.length = 0;
    await together.apply(order('o001'), addEv('o001', 1, 'again'));
    expect(statements).toEqual([expect.stringContaining(ONE_SQL)]);
  });

  it('an actor whose row moved on under the batch is not written by it: its caller takes the locked path, the others are written', async () => {
    const all = await created(10);
    // Another process moves two actors on: this host's rows of them are stale.
    for (const b of [batched, alone]) {
      const other = new ActorHost({ db: b.db, bus: b.bus, registry: registry() });
      for (const id of ['o003', 'o007']) await other.apply(order(id), addEv(id, 50, 'elsewhere'));
    }
    statements.length = 0;
    const add = (host: ActorHost) => all.map((id, i) => () => host.apply(order(id), addEv(id, i)));
    const results = await Promise.all(add(together).map((f) => f()));
    const expected = [];
    for (const f of add(oneByOne)) expected.push(await f());
    expect(results).toEqual(expected);
    expect(results.map((r) => r.version)).toEqual([2, 2, 2, 3, 2, 2, 2, 3, 2, 2]);
    expect(await rows(batched.db)).toEqual(await rows(alone.db));
    // One batch for the ten, then the two stale ones under their locks.
    expect(statements.filter((s) => s.startsWith(BATCH_SQL))).toHaveLength(1);
    expect(statements.filter((s) => s.startsWith(ONE_SQL))).toHaveLength(0);
    expect(statements.filter((s) => s === 'BEGIN')).toHaveLength(2);
  });

  it('a companion refused in the batch fails it whole: each write alone then, the refused one throws, the others are applied', async () => {
    const all = await created(10);
    for (const b of [batched, alone]) await b.db.query(`INSERT INTO companion_log (actor_id, note) VALUES ('elsewhere', 'taken')`);
    const add = (host: ActorHost) => all.map((id, i) => () => host.apply(order(id), addEv(id, i), noting(i === 4 ? 'taken' : `n${i}`)));
    const results = await Promise.allSettled(add(together).map((f) => f()));
    const expected = [];
    for (const f of add(oneByOne)) expected.push(await f().then((value) => ({ status: 'fulfilled', value }), (reason: unknown) => ({ status: 'rejected', reason })));
    expect(results).toEqual(expected);
    expect(results[4]?.status === 'rejected' && results[4].reason).toBeInstanceOf(CompanionRefusedError);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(9);
    expect(await rows(batched.db)).toEqual(await rows(alone.db));
    expect(statements.filter((s) => s.startsWith(BATCH_SQL))).toHaveLength(1);
    expect(statements.filter((s) => s.startsWith(ONE_SQL))).toHaveLength(10);
  });
});
