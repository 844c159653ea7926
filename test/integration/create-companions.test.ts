import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ActorHost } from '../../runtime/engine/actor-host.ts';
import type { CreateCompanion } from '../../runtime/engine/actor-types.ts';
import { MachineRegistry } from '../../runtime/engine/registry.ts';
import { backendFactories, type Backend } from '../helpers/backends.ts';
import { orderDefinition } from '../fixtures/order-machine.ts';

/**
 * Create companions (runtime/engine/actor-types.ts): rows written by the statement that
 * creates an actor, only when the actor is new, committed with it or not at all.
 */
const T0 = 1_700_000_000_000;
const target = (id: string) => ({ kind: 'order', id, merchant: 'm_1', mode: 'test' as const });
const createEv = (id: string) => ({ type: 'order.create', id, at: T0, ttl_ms: 60_000 });

/** Writes (actor id, note) into companion_log; a null note violates NOT NULL. */
const logging = (name: string, note: (version: number) => string | null): CreateCompanion => ({
  name,
  arity: 1,
  cte: (n) => `${name} AS (INSERT INTO companion_log (actor_id, note) SELECT $1, $${n}::text WHERE EXISTS (SELECT 1 FROM pe))`,
  params: (created) => [note(created.version)],
});

describe.each(backendFactories)('create companions on %s', (_name, open) => {
  let b: Backend;
  beforeEach(async () => {
    b = await open();
    await b.db.query(`CREATE TABLE companion_log (actor_id text NOT NULL, note text NOT NULL)`);
  });
  afterEach(async () => b.close());

  const log = async () => (await b.db.query<{ actor_id: string; note: string }>(`SELECT actor_id, note FROM companion_log ORDER BY actor_id, note`)).rows;
  const count = async (sql: string) => Number((await b.db.query<{ n: string }>(`SELECT count(*)::text AS n FROM ${sql}`)).rows[0]!.n);

  it("a caller's companion is written with a new actor, and not again for the same create", async () => {
    const host = new ActorHost({ db: b.db, bus: b.bus, registry: new MachineRegistry([orderDefinition]) });
    const first = await host.apply(target('c1'), createEv('c1:create'), logging('cl', (v) => `first at v${v}`));
    expect(first).toMatchObject({ outcome: 'applied', version: 1, companionWritten: true });
    const again = await host.apply(target('c1'), createEv('c1:create'), logging('cl', () => 'again'));
    expect(again.outcome).toBe('duplicate');
    expect(again.companionWritten).toBeUndefined();
    expect(await log()).toEqual([{ actor_id: 'c1', note: 'first at v1' }]);
  });

  it('a failing companion fails the create: nothing of the actor is written', async () => {
    const host = new ActorHost({ db: b.db, bus: b.bus, registry: new MachineRegistry([orderDefinition]) });
    await expect(host.apply(target('c2'), createEv('c2:create'), logging('cl', () => null))).rejects.toThrow(/null value|not-null/);
    for (const table of [`actors WHERE id = 'c2'`, `actor_events WHERE actor_id = 'c2'`, `outbox WHERE actor_id = 'c2'`, `timers WHERE actor_id = 'c2'`, 'companion_log']) {
      expect(await count(table)).toBe(0);
    }
    // Without the fault the same create succeeds: the failed attempt left nothing behind.
    expect((await host.apply(target('c2'), createEv('c2:create'))).outcome).toBe('applied');
  });

  it("a machine's registered companion is written for every new actor of its kind, beside a caller's", async () => {
    const registry = new MachineRegistry().register(orderDefinition, logging('own', () => 'machine'));
    const host = new ActorHost({ db: b.db, bus: b.bus, registry });
    await host.apply(target('c3'), createEv('c3:create'));
    await host.apply(target('c4'), createEv('c4:create'), logging('cl', () => 'caller'));
    await host.apply(target('c4'), { type: 'order.add', id: 'c4:add', at: T0 + 1, n: 1 });
    expect(await log()).toEqual([
      { actor_id: 'c3', note: 'machine' },
      { actor_id: 'c4', note: 'caller' },
      { actor_id: 'c4', note: 'machine' },
    ]);
  });
});
