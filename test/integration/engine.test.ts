import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { replay } from '../../machines/kit/step.ts';
import { ActorHost } from '../../runtime/engine/actor-host.ts';
import { MalformedEventError, UnknownActorError } from '../../runtime/engine/errors.ts';
import { MachineRegistry } from '../../runtime/engine/registry.ts';
import { Engine } from '../../runtime/engine/runtime.ts';
import { openDb } from '../../storage/open.ts';
import type { Db, Queryable, SqlParam } from '../../storage/db.ts';
import { backendFactories, DATABASE_URL, waitFor, type Backend } from '../helpers/backends.ts';
import { orderDefinition } from '../fixtures/order-machine.ts';

const registry = new MachineRegistry([orderDefinition]);
const T0 = 1_700_000_000_000;
const target = (id: string) => ({ kind: 'order', id, merchant: 'm_1', mode: 'test' as const });
const createEv = (id = 'e-create', ttl = 60_000) => ({ type: 'order.create', id, at: T0, ttl_ms: ttl });

async function count(b: Backend, sql: string, params: unknown[] = []): Promise<number> {
  const { rows } = await b.db.query<{ n: string }>(`SELECT count(*)::text AS n FROM ${sql}`, params as never);
  return Number(rows[0]!.n);
}

describe.each(backendFactories)('engine on %s', (_name, open) => {
  let b: Backend;
  let host: ActorHost;
  beforeEach(async () => {
    b = await open();
    host = new ActorHost({ db: b.db, bus: b.bus, registry });
  });
  afterEach(async () => b.close());

  it('applies a create and a step in one transaction each: snapshot, version, journal, outbox, timers', async () => {
    const r1 = await host.apply(target('o1'), createEv());
    expect(r1).toMatchObject({ outcome: 'applied', version: 1, status: 'open' });
    const r2 = await host.apply(target('o1'), { type: 'order.add', id: 'e2', at: T0 + 1, n: 5 });
    expect(r2).toMatchObject({ outcome: 'applied', version: 2, status: 'open' });
    expect(await count(b, `actor_events WHERE actor_id = 'o1'`)).toBe(2);
    expect(await count(b, `outbox WHERE actor_id = 'o1' AND subject = 'fx.webhook.test'`)).toBe(2);
    expect(await count(b, `timers WHERE actor_id = 'o1'`)).toBe(2);
    const { rows } = await b.db.query<{ version: number; state: string }>(`SELECT version, state FROM actors WHERE id = 'o1'`);
    expect(rows[0]).toEqual({ version: 2, state: 'open' });
  });

  it('puts each applied version on the snapshot feed as the store has it (NATS: the JSON the step encoded)', async () => {
    const got: unknown[] = [];
    const sub = b.bus.listen('snap.>', (_subject, data) => got.push(data));
    await sub.ready;
    const r1 = await host.apply(target('f1'), createEv('f1:create'));
    const r2 = await host.apply(target('f1'), { type: 'order.add', id: 'f1:add', at: T0 + 1, n: 2 });
    await waitFor(async () => got.length >= 2, 5_000, 'two feed items');
    const { rows } = await b.db.query<{ snapshot: unknown }>(`SELECT snapshot FROM actors WHERE id = 'f1'`);
    const owner = { id: 'f1', kind: 'order', merchant: 'm_1', mode: 'test' };
    expect(got).toEqual([
      { ...owner, version: 1, status: r1.status, snapshot: r1.snapshot, event: 'order.create' },
      { ...owner, version: 2, status: r2.status, snapshot: rows[0]!.snapshot, event: 'order.add' },
    ]);
    await sub.stop();
  });

  it('a duplicate delivery produces one effect', async () => {
    await host.apply(target('o2'), createEv());
    const add = { type: 'order.add', id: 'dup-1', at: T0 + 1, n: 1 };
    const results = await Promise.all([1, 2, 3, 4].map(() => host.apply(target('o2'), add)));
    expect(results.filter((r) => r.outcome === 'applied')).toHaveLength(1);
    expect(results.filter((r) => r.outcome === 'duplicate')).toHaveLength(3);
    expect(await count(b, `outbox WHERE actor_id = 'o2'`)).toBe(2);
    expect(await count(b, `actor_events WHERE actor_id = 'o2' AND event_id = 'dup-1'`)).toBe(1);
  });

  it('an event the state does not accept is recorded as ignored: no version bump, no effect', async () => {
    await host.apply(target('o3'), createEv());
    await host.apply(target('o3'), { type: 'order.close', id: 'c1', at: T0 + 1 });
    const r = await host.apply(target('o3'), { type: 'order.add', id: 'late', at: T0 + 2, n: 1 });
    expect(r).toMatchObject({ outcome: 'ignored', version: 2, status: 'closed' });
    expect(await count(b, `processed_events WHERE actor_id = 'o3' AND event_id = 'late' AND outcome = 'ignored'`)).toBe(1);
    expect(await count(b, `outbox WHERE actor_id = 'o3'`)).toBe(1);
  });

  it('a malformed event is rejected before the transaction with a typed error', async () => {
    await host.apply(target('o4'), createEv());
    await expect(host.apply(target('o4'), { type: 'order.add', id: 'x', at: T0, n: 'five' })).rejects.toBeInstanceOf(MalformedEventError);
    await expect(host.apply(target('o4'), { type: 'order.nope', id: 'x', at: T0 })).rejects.toBeInstanceOf(MalformedEventError);
    await expect(host.apply(target('nobody'), { type: 'order.add', id: 'x', at: T0, n: 1 })).rejects.toBeInstanceOf(UnknownActorError);
    expect(await count(b, `processed_events WHERE event_id = 'x'`)).toBe(0);
  });

  it('nothing is half-written when a write fails mid-transaction', async () => {
    await host.apply(target('o5'), createEv());
    await b.db.query(`CREATE FUNCTION fail_outbox() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN IF NEW.payload->'event'->'data'->>'n' = '666' THEN RAISE EXCEPTION 'injected fault'; END IF; RETURN NEW; END $$`);
    await b.db.query(`CREATE TRIGGER outbox_fault BEFORE INSERT ON outbox FOR EACH ROW EXECUTE FUNCTION fail_outbox()`);
    await expect(host.apply(target('o5'), { type: 'order.add', id: 'boom', at: T0 + 1, n: 666 })).rejects.toThrow(/injected fault/);
    const { rows } = await b.db.query<{ version: number }>(`SELECT version FROM actors WHERE id = 'o5'`);
    expect(rows[0]!.version).toBe(1);
    expect(await count(b, `actor_events WHERE actor_id = 'o5'`)).toBe(1);
    expect(await count(b, `processed_events WHERE event_id = 'boom'`)).toBe(0);
    expect(await count(b, `timers WHERE actor_id = 'o5' AND name = 'idle'`)).toBe(0);
    // The same event succeeds once the fault is gone: nothing of the failed attempt blocks it.
    await b.db.query(`DROP TRIGGER outbox_fault ON outbox`);
    expect((await host.apply(target('o5'), { type: 'order.add', id: 'boom', at: T0 + 1, n: 666 })).outcome).toBe('applied');
  });

  it('two hosts racing on one actor end with a consistent version', async () => {
    await host.apply(target('race'), createEv());
    // A second host with its own connection pool where the backend allows one.
    const db2 = b.name === 'postgres+nats' ? await openDb({ databaseUrl: DATABASE_URL, schema: b.schema }) : b.db;
    const host2 = new ActorHost({ db: db2, bus: b.bus, registry });
    const n = 60;
    await Promise.all(
      Array.from({ length: n }, (_, i) => (i % 2 ? host : host2).apply(target('race'), { type: 'order.add', id: `r${i}`, at: T0 + i, n: i })),
    );
    if (db2 !== b.db) await db2.close();
    const { rows } = await b.db.query<{ version: number; snapshot: { context: { total: number; adds: number } } }>(`SELECT version, snapshot FROM actors WHERE id = 'race'`);
    expect(rows[0]!.version).toBe(n + 1);
    expect(rows[0]!.snapshot.context).toEqual({ total: (n * (n - 1)) / 2, adds: n });
    const seqs = await b.db.query<{ seq: number }>(`SELECT seq FROM actor_events WHERE actor_id = 'race' ORDER BY seq`);
    expect(seqs.rows.map((r) => r.seq)).toEqual(Array.from({ length: n + 1 }, (_, i) => i + 1));
  });

  // docs/engine.md "Optimistic path": a cached row saves the locking read, never correctness.
  it('an event for an actor this host last wrote costs one statement, and writes all its parts', async () => {
    await host.apply(target('one'), createEv());
    let statements = 0;
    let txs = 0;
    const counted = { ...b.db, kind: b.db.kind, close: () => b.db.close(), tx: <T,>(fn: (q: Queryable) => Promise<T>) => (txs++, b.db.tx(fn)), query: ((sql: string, params?: readonly SqlParam[]) => (statements++, b.db.query(sql, params))) as Db['query'] };
    const h = new ActorHost({ db: counted, bus: b.bus, registry });
    await h.apply(target('one'), { type: 'order.add', id: 'warm', at: T0 + 1, n: 1 }); // locked path: fills the cache
    statements = 0;
    txs = 0;
    const r = await h.apply(target('one'), { type: 'order.add', id: 'fast', at: T0 + 2, n: 2 });
    expect(r).toMatchObject({ outcome: 'applied', version: 3 });
    expect({ statements, txs }).toEqual({ statements: 1, txs: 0 });
    expect(await count(b, `actor_events WHERE actor_id = 'one' AND event_id = 'fast' AND seq = 3`)).toBe(1);
    expect(await count(b, `processed_events WHERE actor_id = 'one' AND event_id = 'fast' AND outcome = 'applied'`)).toBe(1);
    expect(await count(b, `outbox WHERE actor_id = 'one'`)).toBe(3);
  });

  it('a host whose cached row is stale falls back to the locked path: nothing lost, nothing doubled', async () => {
    await host.apply(target('st'), createEv()); // host caches version 1
    const other = new ActorHost({ db: b.db, bus: b.bus, registry });
    await other.apply(target('st'), { type: 'order.add', id: 'o1', at: T0 + 1, n: 10 });
    const r = await host.apply(target('st'), { type: 'order.add', id: 'h1', at: T0 + 2, n: 5 });
    expect(r).toMatchObject({ outcome: 'applied', version: 3 });
    expect((r.snapshot as { context: { total: number } }).context.total).toBe(15);
    // The event the other host applied, delivered again to this host (cache now fresh): a duplicate.
    expect(await host.apply(target('st'), { type: 'order.add', id: 'o1', at: T0 + 1, n: 10 })).toMatchObject({ outcome: 'duplicate', version: 3 });
    // A stale row that would accept an event the actor no longer accepts.
    await other.apply(target('st'), { type: 'order.close', id: 'cl', at: T0 + 3 });
    expect(await host.apply(target('st'), { type: 'order.add', id: 'late', at: T0 + 4, n: 1 })).toMatchObject({ outcome: 'ignored', version: 4, status: 'closed' });
    const journal = await b.db.query<{ event: never }>(`SELECT event FROM actor_events WHERE actor_id = 'st' ORDER BY seq`);
    const stored = await b.db.query<{ snapshot: unknown; version: number }>(`SELECT snapshot, version FROM actors WHERE id = 'st'`);
    expect(journal.rows).toHaveLength(4);
    expect(stored.rows[0]!.version).toBe(4);
    expect(replay(orderDefinition, journal.rows.map((r) => r.event))).toEqual(stored.rows[0]!.snapshot);
    expect(await count(b, `outbox WHERE actor_id = 'st'`)).toBe(3);
  });

  it('replaying the journal from the first event rebuilds the stored snapshot exactly', async () => {
    await host.apply(target('rp'), createEv());
    for (let i = 0; i < 10; i++) await host.apply(target('rp'), { type: 'order.add', id: `a${i}`, at: T0 + i, n: i * 3 });
    await host.apply(target('rp'), { type: 'order.add', id: 'a0', at: T0, n: 100 }); // duplicate: not journaled
    await host.apply(target('rp'), { type: 'order.close', id: 'cl', at: T0 + 99 });
    await host.apply(target('rp'), { type: 'order.add', id: 'ign', at: T0 + 100, n: 1 }); // ignored: not journaled
    const journal = await b.db.query<{ event: never }>(`SELECT event FROM actor_events WHERE actor_id = 'rp' ORDER BY seq`);
    const stored = await b.db.query<{ snapshot: unknown }>(`SELECT snapshot FROM actors WHERE id = 'rp'`);
    expect(replay(orderDefinition, journal.rows.map((r) => r.event))).toEqual(stored.rows[0]!.snapshot);
  });

  it('routes events, timers and outbox effects over the bus; stale timer firings are dropped', async () => {
    let now = T0;
    const engine = new Engine({ db: b.db, bus: b.bus, registry, sweeper: { now: () => now, pollMs: 20 } });
    const webhooks: string[] = [];
    const sub = await b.bus.consume({ durable: 'test-webhooks', subject: 'fx.webhook.>', handler: async (m) => {
        webhooks.push((m.data as { event: { type: string } }).event.type);
        m.ack();
      } });
    await engine.start();
    try {
      await engine.host.send(target('bt'), createEv('c', 5_000));
      await engine.host.send(target('peer'), createEv('c', 600_000));
      await waitFor(async () => (await count(b, `actors WHERE id IN ('bt','peer')`)) === 2, 10_000, 'creates over the bus');
      // sendTo travels through the outbox and the bus to the other actor.
      await engine.host.send(target('bt'), { type: 'order.ping', id: 'p1', at: T0 + 1, to: 'peer' });
      await waitFor(async () => (await count(b, `actor_events WHERE actor_id = 'peer' AND event_id = 'ping:p1'`)) === 1, 10_000, 'sendTo');
      now = T0 + 6_000;
      await waitFor(async () => (await engine.host.apply(target('bt'), { type: 'order.close', id: 'probe', at: T0 }).then(() => null, () => null), (await b.db.query<{ state: string }>(`SELECT state FROM actors WHERE id = 'bt'`)).rows[0]?.state !== 'open'), 10_000, 'timer');
      const st = await b.db.query<{ state: string }>(`SELECT state FROM actors WHERE id = 'bt'`);
      expect(['expired', 'closed']).toContain(st.rows[0]!.state);
      await waitFor(async () => webhooks.length >= 3, 10_000, 'webhooks');
      expect(webhooks.filter((t) => t === 'order.created')).toHaveLength(2);
    } finally {
      await sub.stop();
      await engine.stop();
    }
  });

  it('timer firings: the due timer expires the actor; a rescheduled timer drops the stale firing', async () => {
    let now = T0;
    const engine = new Engine({ db: b.db, bus: b.bus, registry, sweeper: { now: () => now, pollMs: 20 } });
    await engine.start();
    try {
      await engine.host.apply(target('tm'), createEv('c', 1_000));
      // A stale firing (old generation) is dropped without a state change.
      const stale = await engine.host.apply(target('tm'), { type: 'timer.expired', id: 'tmr:expiry:0', at: T0, timer: 'expiry', generation: 0 });
      expect(stale.outcome).toBe('stale_timer');
      now = T0 + 2_000;
      await waitFor(async () => (await b.db.query<{ state: string }>(`SELECT state FROM actors WHERE id = 'tm'`)).rows[0]?.state === 'expired', 10_000, 'expiry');
      expect(await count(b, `timers WHERE actor_id = 'tm' AND name = 'expiry'`)).toBe(0);
    } finally {
      await engine.stop();
    }
  });
});
