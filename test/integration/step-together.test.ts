/**
 * ActorHost's mailbox (runtime/engine/step-together.ts): events for one actor that wait for its
 * step in flight are written together, in one statement from the row the process last wrote
 * (or under the row lock when that row is stale), each caller answered on its own. A rejected
 * event rejects only its caller; a failed shared step is retried one event at a time. That the
 * results and rows equal one-by-one application for any events: test/property/step-together.model.test.ts.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ActorHost } from '../../runtime/engine/actor-host.ts';
import { MalformedEventError } from '../../runtime/engine/errors.ts';
import { MachineRegistry } from '../../runtime/engine/registry.ts';
import type { Db } from '../../storage/db.ts';
import { backendFactories, type Backend } from '../helpers/backends.ts';
import { counting } from '../helpers/counting-db.ts';
import { orderDefinition } from '../fixtures/order-machine.ts';

const registry = new MachineRegistry([orderDefinition]);
const T0 = 1_700_000_000_000;
const target = (id: string) => ({ kind: 'order', id, merchant: 'm_1', mode: 'test' as const });
const add = (i: number) => ({ type: 'order.add', id: `add-${i}`, at: T0 + i, n: 1 });
const N = 10;

describe.each(backendFactories)('events applied together on %s', (_name, open) => {
  let b: Backend;
  let statements: string[];
  let db: Db;
  beforeEach(async () => {
    b = await open();
    ({ db, statements } = counting(b.db));
  });
  afterEach(async () => b.close());

  async function created(host: ActorHost, id: string): Promise<void> {
    await host.apply(target(id), { type: 'order.create', id: 'create', at: T0, ttl_ms: 60_000 });
    statements.length = 0;
  }

  it('writes the events that waited for the step in flight in one statement, each caller its own version', async () => {
    const host = new ActorHost({ db, bus: b.bus, registry });
    await created(host, 'o1');
    const results = await Promise.all(Array.from({ length: N }, (_, i) => host.applyInOrder(target('o1'), add(i))));
    expect(results.map((r) => [r.outcome, r.version, (r.snapshot.context as { total: number }).total])).toEqual(Array.from({ length: N }, (_, i) => ['applied', i + 2, i + 1]));
    // The first alone, the other nine together: two statements where one per event was ten.
    expect(statements, statements.join('\n')).toHaveLength(2);
    const journal = await b.db.query<{ seq: number }>(`SELECT seq FROM actor_events WHERE actor_id = 'o1' ORDER BY seq`);
    expect(journal.rows.map((r) => r.seq)).toEqual(Array.from({ length: N + 1 }, (_, i) => i + 1));
  });

  it('a rejected or malformed event answers only its caller; duplicates are duplicates', async () => {
    const host = new ActorHost({ db, bus: b.bus, registry });
    await created(host, 'o2');
    const events = [add(0), add(1), { type: 'order.add', id: 'bad', at: T0, n: 'x' }, add(1), { type: 'order.close', id: 'close', at: T0 + 5 }, add(2), add(3)];
    const settled = await Promise.allSettled(events.map((e) => host.applyInOrder(target('o2'), e)));
    const got = settled.map((s) => (s.status === 'fulfilled' ? `${s.value.outcome}@${s.value.version}` : (s.reason as Error).constructor.name));
    expect(got).toEqual(['applied@2', 'applied@3', MalformedEventError.name, 'duplicate@3', 'applied@4', 'ignored@4', 'ignored@4']);
    expect(statements, statements.join('\n')).toHaveLength(2);
  });

  it('a stale row takes the lock: another host wrote last, and the shared step still counts from the stored row', async () => {
    const host = new ActorHost({ db, bus: b.bus, registry });
    const other = new ActorHost({ db: b.db, bus: b.bus, registry });
    await created(host, 'o3');
    await other.apply(target('o3'), add(100));
    const results = await Promise.all(Array.from({ length: 4 }, (_, i) => host.applyInOrder(target('o3'), add(i))));
    expect(results.map((r) => r.version)).toEqual([3, 4, 5, 6]);
    const stored = await b.db.query<{ version: number; snapshot: { context: { total: number } } }>(`SELECT version, snapshot FROM actors WHERE id = 'o3'`);
    expect(stored.rows[0]).toMatchObject({ version: 6, snapshot: { context: { total: 5 } } });
  });

  it('a shared step that fails writes nothing, and each of its events is then applied alone', async () => {
    let failOnce = true;
    const failing: Db = {
      ...db,
      query: (sql, params) => {
        if (failOnce && sql.includes('jsonb_to_recordset($4::jsonb)')) {
          failOnce = false;
          return Promise.reject(new Error('connection lost'));
        }
        return db.query(sql, params);
      },
    };
    const host = new ActorHost({ db: failing, bus: b.bus, registry });
    await created(host, 'o4');
    const results = await Promise.all(Array.from({ length: 4 }, (_, i) => host.applyInOrder(target('o4'), add(i))));
    expect(failOnce).toBe(false);
    expect(results.map((r) => `${r.outcome}@${r.version}`)).toEqual(['applied@2', 'applied@3', 'applied@4', 'applied@5']);
    const journal = await b.db.query<{ event_id: string }>(`SELECT event_id FROM actor_events WHERE actor_id = 'o4' ORDER BY seq`);
    expect(journal.rows.map((r) => r.event_id)).toEqual(['create', 'add-0', 'add-1', 'add-2', 'add-3']);
  });
});
