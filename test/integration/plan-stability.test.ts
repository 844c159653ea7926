import { afterEach, describe, expect, it, vi } from 'vitest';
import { MemoryBus } from '../../runtime/bus/memory-bus.ts';
import { ActorHost } from '../../runtime/engine/actor-host.ts';
import { OutboxRelay } from '../../runtime/engine/outbox-relay.ts';
import { TimerSweeper } from '../../runtime/engine/timer-sweeper.ts';
import { machineRegistry } from '../../runtime/machines.ts';
import { CLAIM_MANY_SQL, claimManyParams, LOOKUP_MANY_SQL } from '../../runtime/merchant/gate-sql.ts';
import { IdempotencyRecords } from '../../runtime/merchant/idempotency-records.ts';
import { UsdcSimLedger } from '../../runtime/market/lanes/usdc-sim.ts';
import { PurchaseKeys } from '../../runtime/market/purchase-keys.ts';
import type { Db } from '../../storage/db.ts';
import { openDb } from '../../storage/open.ts';
import { DATABASE_URL, realAvailable, uniqueName } from '../helpers/backends.ts';

/**
 * Batched statements must not read a whole table per call once it has grown. PostgreSQL plans a
 * prepared statement (or a PL/pgSQL statement) once per connection and keeps the plan while the
 * table's statistics stay unchanged, which with autovacuum off (as on this machine) is forever.
 * A plan made on a connection's first call, while the table is small, must therefore still be an
 * index (or TID) lookup when the table holds a day of rows. Each case: first calls on a small
 * table, then 20,000 rows, then calls on the same connection, counting the rows read by
 * sequential scans (pg_stat_user_tables, flushed by pg_stat_force_next_flush()).
 */
const ROWS = 20_000;
type Open = () => Promise<{ db: Db; drop: () => Promise<void> }>;

const openPostgres: Open = async () => {
  const schema = uniqueName('plan');
  // One connection: the plan made by the first call is the one the later calls use.
  const db = await openDb({ databaseUrl: DATABASE_URL, schema, poolSize: 1 });
  return { db, drop: () => db.query(`DROP SCHEMA ${schema} CASCADE`).then(() => db.close()) };
};

const openPglite: Open = async () => {
  const db = await openDb({ dataDir: 'memory' });
  return { db, drop: () => db.close() };
};

const backends: Array<[string, Open]> = [...(realAvailable ? [['postgres', openPostgres] as [string, Open]] : []), ['pglite', openPglite]];

/** Rows the table gave to sequential scans and to index scans so far. */
async function rowsRead(db: Db, table: string): Promise<{ seq: number; index: number }> {
  await db.query('SELECT pg_stat_force_next_flush()');
  const { rows } = await db.query<{ seq: string | null; idx: string | null }>(
    `SELECT seq_tup_read AS seq, idx_tup_fetch AS idx FROM pg_stat_user_tables WHERE schemaname = current_schema() AND relname = $1`,
    [table],
  );
  return { seq: Number(rows[0]?.seq ?? 0), index: Number(rows[0]?.idx ?? 0) };
}

describe.each(backends)('plans of batched statements on %s', (name, open) => {
  let drop: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await drop?.();
    drop = undefined;
  });

  it('records first responses (anm_idempotency_done_many) by primary key, whatever the table size', async () => {
    const o = await open();
    drop = o.drop;
    const records = new IdempotencyRecords(o.db);
    const claim = (key: string) =>
      o.db.query(`INSERT INTO idempotency_keys (merchant, mode, key, request_hash, state) VALUES ('m_1', 'test', $1, 'h', 'in_flight')`, [key]);
    for (let i = 0; i < 8; i++) {
      await claim(`early-${i}`);
      await records.done('m_1', 'test', `early-${i}`, 201, { 'content-type': 'application/json' }, '{"id":"pay_x"}');
    }
    await o.db.query(
      `INSERT INTO idempotency_keys (merchant, mode, key, request_hash, state) SELECT 'm_' || (i % 32), 'test', 'bulk-' || i, 'h', 'in_flight' FROM generate_series(1, ${ROWS}) i`,
    );
    const before = (await rowsRead(o.db, 'idempotency_keys')).seq;
    for (let i = 0; i < 4; i++) {
      await claim(`late-${i}`);
      await records.done('m_1', 'test', `late-${i}`, 201, { 'content-type': 'application/json' }, '{"id":"pay_y"}');
    }
    expect((await rowsRead(o.db, 'idempotency_keys')).seq).toBeLessThan(before + 1_000);
    const { rows } = await o.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM idempotency_keys WHERE key LIKE 'late-%' AND state = 'done' AND status = 201`);
    expect(rows[0]?.n).toBe(4);
  });

  it('claims due timers without scanning every timer', async () => {
    const o = await open();
    drop = o.drop;
    const bus = new MemoryBus();
    const host = new ActorHost({ db: o.db, bus, registry: machineRegistry() });
    const published: string[] = [];
    await bus.consume({
      durable: 'plan-test',
      subject: 'actor.>',
      handler: async (m) => {
        published.push((m.data as { event: { id: string } }).event.id);
        m.ack();
      },
    });
    let now = Date.parse('2026-11-24T00:00:00Z');
    const sweeper = new TimerSweeper(o.db, host, { now: () => now });
    const timer = (actor: string, fireAt: number) =>
      o.db.query(`INSERT INTO timers (actor_id, name, kind, event_type, fire_at, generation) VALUES ($1, 'expiry', 'payment_intent', 'timer.expired', to_timestamp($2::double precision / 1000), 1)`, [actor, fireAt]);
    // Early sweeps claim batches, as a busy expiry minute does.
    for (let i = 0; i < 8; i++) {
      for (let j = 0; j < 50; j++) await timer(`pay_early${i}_${j}`, now - 1 - j);
      expect(await sweeper.sweepOnce()).toBe(50);
      now += 1_000;
    }
    await o.db.query(
      `INSERT INTO timers (actor_id, name, kind, event_type, fire_at, generation)
       SELECT 'pay_bulk' || i, 'expiry', 'payment_intent', 'timer.expired', to_timestamp(${now / 1000} + 3600), 1 FROM generate_series(1, ${ROWS}) i`,
    );
    const before = (await rowsRead(o.db, 'timers')).seq;
    for (let i = 0; i < 4; i++) {
      await timer(`pay_late${i}`, now - 1);
      await timer(`pay_late${i}b`, now - 2);
      expect(await sweeper.sweepOnce()).toBe(2);
      now += 1_000;
    }
    expect((await rowsRead(o.db, 'timers')).seq).toBeLessThan(before + 1_000);
    // Claimed ones are marked, so a sweep within the refire window publishes nothing again.
    expect(await sweeper.sweepOnce()).toBe(0);
    await vi.waitFor(() => expect(published.filter((id) => id === 'tmr:expiry:1')).toHaveLength(408));
    await bus.close();
  });

  it('relays outbox rows without reading the published rows the outbox keeps', async () => {
    const o = await open();
    drop = o.drop;
    const bus = new MemoryBus();
    const relay = new OutboxRelay(o.db, bus);
    let next = 0;
    const rows = (n: number) =>
      o.db.query(
        `INSERT INTO outbox (actor_id, msg_id, subject, payload) SELECT 'pay_x', 'msg-' || (${next} + i), 'fx.test', '{}'::jsonb FROM generate_series(1, ${n}) i`,
      ).then(() => (next += n));
    for (let i = 0; i < 8; i++) {
      await rows(20);
      expect(await relay.drainOnce()).toBe(20);
    }
    // A day of published rows, kept until the prune.
    await rows(ROWS);
    while ((await relay.drainOnce()) > 0);
    const before = await rowsRead(o.db, 'outbox');
    for (let i = 0; i < 4; i++) {
      await rows(50);
      expect(await relay.drainOnce()).toBe(50);
    }
    const after = await rowsRead(o.db, 'outbox');
    expect(after.seq + after.index).toBeLessThan(before.seq + before.index + 1_000);
    const { rows: pending } = await o.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM outbox WHERE published_at IS NULL`);
    expect(pending[0]?.n).toBe(0);
    await bus.close();
  });

  it('claims purchase keys in a batch (ADR 0093) by key, actor id and ledger key, whatever the tables hold', async () => {
    const o = await open();
    drop = o.drop;
    const keys = new PurchaseKeys(o.db);
    const ledger = new UsdcSimLedger(o.db);
    const addr = (i: number) => `0x${i.toString(16).padStart(40, '0')}`;
    const nonce = (i: number) => `0x${i.toString(16).padStart(64, '0')}`;
    /** Eight claims in one turn, each with a two-leg ledger read; all claimed. */
    const batch = async (round: string) => {
      const claims = await Promise.all(
        Array.from({ length: 8 }, (_, i) => keys.claim(`pi_${i}`, `${round}-${i}`, 'h', ledger.authorizationStatesRead([{ authorizer: addr(i), nonce: nonce(i) }, { authorizer: addr(i), nonce: nonce(i + 1) }]))),
      );
      expect(claims.map((c) => c.outcome)).toEqual(Array(8).fill('claimed'));
    };
    for (let i = 0; i < 8; i++) await batch(`early${i}`);
    await o.db.query(
      `INSERT INTO actors (id, kind, merchant, mode, machine, machine_version, state, snapshot, version)
       SELECT 'pi_' || i, 'purchase', NULL, NULL, 'purchase', 1, 'QUOTED', '{}'::jsonb, 1 FROM generate_series(1, ${ROWS}) i`,
    );
    await o.db.query(`INSERT INTO idempotency_keys (merchant, mode, key, request_hash, state) SELECT 'pi_' || (i % 64), 'market', 'bulk-' || i, 'h', 'in_flight' FROM generate_series(1, ${ROWS}) i`);
    await o.db.query(`INSERT INTO usdc_balances (address, balance) SELECT '0x' || lpad(to_hex(i), 40, '0'), i FROM generate_series(1, ${ROWS}) i`);
    await o.db.query(`INSERT INTO usdc_authorizations (authorizer, nonce, recipient, value, tx_hash) SELECT '0x' || lpad(to_hex(i), 40, '0'), '0x' || lpad(to_hex(i), 64, '0'), 'x', 1, 'x' || i FROM generate_series(1, ${ROWS}) i`);
    const tables = ['actors', 'idempotency_keys', 'usdc_balances', 'usdc_authorizations'];
    const before = await Promise.all(tables.map((t) => rowsRead(o.db, t)));
    for (let i = 0; i < 4; i++) await batch(`late${i}`);
    const after = await Promise.all(tables.map((t) => rowsRead(o.db, t)));
    for (const [i, a] of after.entries()) expect(a.seq, tables[i]).toBeLessThan(before[i]!.seq + 1_000);
  });

  it('looks up offered keys (gate reads and claims) by their hash, whatever the number of keys', async () => {
    const o = await open();
    drop = o.drop;
    await o.db.query(`INSERT INTO merchants (id, name, email, password_hash, handle) VALUES ('m0', 'M', 'm0@example.com', 'x', 'm-0')`);
    await o.db.query(`INSERT INTO api_keys (id, merchant, mode, kind, prefix, hash) VALUES ('key_0', 'm0', 'test', 'secret', 'sk_test_', 'h0')`);
    const lookup = (hash: string, readId: string | null = null) =>
      o.db.query<{ i: number; merchant: string; read_state: string | null }>(LOOKUP_MANY_SQL, [[hash, 'unknown'], [readId, null]]);
    const claim = (hash: string, key: string) =>
      o.db.query<{ claimed: boolean }>(CLAIM_MANY_SQL, claimManyParams([{ hash, key, requestHash: 'rh', newIntentId: `pay_${key}` }]));
    for (let i = 0; i < 8; i++) {
      expect((await lookup('h0', 'pay_none')).rows).toEqual([expect.objectContaining({ i: 1, merchant: 'm0', read_state: null })]);
      expect((await claim('h0', `early-${i}`)).rows[0]?.claimed).toBe(true);
    }
    await o.db.query(`INSERT INTO merchants (id, name, email, password_hash, handle) SELECT 'm' || i, 'M', 'm' || i || '@example.com', 'x', 'm-' || i FROM generate_series(1, 5000) i`);
    await o.db.query(
      `INSERT INTO api_keys (id, merchant, mode, kind, prefix, hash) SELECT 'key_' || i, 'm' || (1 + i % 5000), 'test', 'secret', 'sk_test_', 'h' || i FROM generate_series(1, ${ROWS}) i`,
    );
    const before = (await rowsRead(o.db, 'api_keys')).seq;
    for (let i = 0; i < 4; i++) {
      expect((await lookup(`h${100 + i}`)).rows).toEqual([expect.objectContaining({ i: 1, merchant: `m${1 + ((100 + i) % 5000)}` })]);
      expect((await claim(`h${200 + i}`, `late-${i}`)).rows[0]?.claimed).toBe(true);
    }
    expect((await rowsRead(o.db, 'api_keys')).seq).toBeLessThan(before + 1_000);
    if (name === 'postgres') {
      // The claims' plan is the cached generic one after PostgreSQL's five trial custom plans
      // (the jsonb parameter hides the batch size from the planner), not a planning per call.
      const { rows } = await o.db.query<{ generic: number; custom: number }>(
        `SELECT generic_plans::int AS generic, custom_plans::int AS custom FROM pg_prepared_statements WHERE statement = $1`,
        [CLAIM_MANY_SQL],
      );
      expect(rows[0]).toEqual({ generic: 7, custom: 5 });
    }
    // A read names its intent: one row by primary key, not a scan of the merchant's intents.
    await o.db.query(
      `INSERT INTO actors (id, kind, merchant, mode, machine, machine_version, state, snapshot, version)
       SELECT 'pay_' || i, 'payment_intent', 'm0', 'test', 'payment_intent', 1, 'AWAITING_PAYMENT', '{}'::jsonb, 1 FROM generate_series(1, ${ROWS}) i`,
    );
    const actorsBefore = await rowsRead(o.db, 'actors');
    for (let i = 0; i < 4; i++) expect((await lookup('h0', `pay_${100 + i}`)).rows[0]?.read_state).toBe('AWAITING_PAYMENT');
    const actorsAfter = await rowsRead(o.db, 'actors');
    expect(actorsAfter.seq + actorsAfter.index).toBeLessThan(actorsBefore.seq + actorsBefore.index + 1_000);
  });
});
