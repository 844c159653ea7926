/**
 * The create's one statement (ADR 0064): a plain insert of the actor row, so a create writes no
 * speculative insertion, and a create that finds its actor is still answered by the locked path;
 * a kind registered with `asyncCommit` (the purchase, created by its quote) commits without
 * waiting for the WAL flush, in that transaction alone.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ActorHost } from '../../runtime/engine/actor-host.ts';
import { MachineRegistry } from '../../runtime/engine/registry.ts';
import { writeStatement } from '../../runtime/engine/write-statement.ts';
import { machineRegistry } from '../../runtime/machines.ts';
import { currentLsn, walByRelation } from '../bench/pg-wal-relations.ts';
import { backendFactories, type Backend } from '../helpers/backends.ts';
import { orderDefinition } from '../fixtures/order-machine.ts';

const T0 = 1_700_000_000_000;
const target = (id: string) => ({ kind: 'order', id, merchant: 'm_1', mode: 'test' as const });
const createEv = (id = 'e-create') => ({ type: 'order.create', id, at: T0, ttl_ms: 60_000 });

describe.each(backendFactories)('the create statement on %s', (name, open) => {
  let b: Backend;
  let host: ActorHost;
  beforeEach(async () => {
    b = await open();
    host = new ActorHost({ db: b.db, bus: b.bus, registry: new MachineRegistry([orderDefinition]) });
  });
  afterEach(async () => b.close());

  it('a create repeated, one after the other or at once, makes one actor; the others are answered duplicate', async () => {
    expect(await host.apply(target('c1'), createEv())).toMatchObject({ outcome: 'applied', version: 1 });
    expect(await host.apply(target('c1'), createEv())).toMatchObject({ outcome: 'duplicate', version: 1 });
    const at = await Promise.all([1, 2, 3, 4].map(() => host.apply(target('c2'), createEv('e-c2'))));
    expect(at.map((r) => r.outcome).sort()).toEqual(['applied', 'duplicate', 'duplicate', 'duplicate']);
    // Another create event for an existing actor is not applied to it.
    expect((await host.apply(target('c1'), createEv('e-other'))).outcome).not.toBe('applied');
    const { rows } = await b.db.query<{ id: string; version: number; events: number; timers: number }>(
      `SELECT a.id, a.version, (SELECT count(*)::int FROM actor_events e WHERE e.actor_id = a.id) AS events,
              (SELECT count(*)::int FROM timers t WHERE t.actor_id = a.id) AS timers FROM actors a ORDER BY a.id`,
    );
    expect(rows).toEqual([
      { id: 'c1', version: 1, events: 1, timers: 1 },
      { id: 'c2', version: 1, events: 1, timers: 1 },
    ]);
  });

  it.runIf(name === 'postgres+nats')('a create inserts its actor row without a speculative insertion', async () => {
    await host.apply(target('warm'), createEv('e-warm'));
    const from = await currentLsn(b.db);
    for (let i = 0; i < 20; i++) await host.apply(target(`s${i}`), createEv(`e-s${i}`));
    const wal = await walByRelation(b.db, b.schema!, from, await currentLsn(b.db));
    expect(wal).not.toBeNull();
    const onActors = (type: string) => wal!.filter((w) => w.relation === 'actors' && w.recordType.startsWith(type)).reduce((n, w) => n + w.records, 0);
    expect(onActors('INSERT')).toBe(20);
    expect(onActors('HEAP_CONFIRM')).toBe(0);
  });

  it.runIf(name === 'postgres+nats')('a create of an async kind sets synchronous_commit off for its own transaction only', async () => {
    const parts = { create: true, outbox: false, timerDeletes: false, timerUpserts: false };
    const params = ['a1', 'e-a1', 1, JSON.stringify(createEv('e-a1')), null, 'open', T0, 'order', null, null, 1, '{}'];
    const setting = await b.db.tx(async (q) => {
      await q.query(writeStatement({ ...parts, asyncCommit: true }), params);
      return (await q.query<{ synchronous_commit: string }>(`SHOW synchronous_commit`)).rows[0]?.synchronous_commit;
    });
    expect(setting).toBe('off');
    const after = await b.db.tx(async (q) => {
      await q.query(writeStatement(parts), ['a2', 'e-a2', ...params.slice(2)]);
      return (await q.query<{ synchronous_commit: string }>(`SHOW synchronous_commit`)).rows[0]?.synchronous_commit;
    });
    expect(after).toBe('on');
  });
});

describe('which creates commit asynchronously', () => {
  it('only the purchase (its create is a quote, which charges nothing); every other kind waits for the flush', () => {
    const r = machineRegistry();
    expect(r.kinds().filter((k) => r.asyncCreate(k))).toEqual(['purchase']);
  });
});
