import { afterEach, describe, expect, it } from 'vitest';
import type { Bus } from '../../runtime/bus/types.ts';
import { OutboxRelay } from '../../runtime/engine/outbox-relay.ts';
import type { Db } from '../../storage/db.ts';
import { openDb } from '../../storage/open.ts';
import { DATABASE_URL, realAvailable, uniqueName, waitFor } from '../helpers/backends.ts';

/**
 * The relay's floor (runtime/engine/outbox-relay.ts): a claim scans the pending index from
 * the highest id every transaction that could still commit a lower one has passed, not from
 * the first row, and loses no row committed late by a transaction that took its id early.
 * PostgreSQL only: a transaction held open beside the relay needs a second connection.
 */
describe.runIf(realAvailable)('outbox relay floor on postgres', () => {
  let db: Db;
  let schema: string;
  afterEach(async () => {
    await db.query(`DROP SCHEMA ${schema} CASCADE`);
    await db.close();
  });

  async function open(): Promise<{ relay: OutboxRelay; published: string[] }> {
    schema = uniqueName('relay');
    db = await openDb({ databaseUrl: DATABASE_URL, schema, poolSize: 4 });
    const published: string[] = [];
    // What the relay hands the bus, in order (the bus itself is not under test here).
    const bus = {
      kind: 'memory',
      publish: async (_subject: string, _data: unknown, opts?: { msgId?: string }) => void published.push(opts?.msgId ?? ''),
    } as unknown as Bus;
    return { relay: new OutboxRelay(db, bus, { fullScanMs: 3_600_000 }), published };
  }

  const insert = (q: Pick<Db, 'query'>, msgId: string) =>
    q.query(`INSERT INTO outbox (actor_id, msg_id, subject, payload) VALUES ('pay_x', $1, 'fx.test', '{}'::jsonb)`, [msgId]);

  it('publishes a row committed after a higher id was published (a straggler), once', async () => {
    const { relay, published } = await open();
    await insert(db, 'before');
    expect(await relay.drainOnce()).toBe(1);
    // A transaction takes the next id and stays open while a later id commits and is published.
    let commit!: () => void;
    const held = new Promise<void>((r) => (commit = r));
    let inserted!: () => void;
    const took = new Promise<void>((r) => (inserted = r));
    const straggler = db.tx(async (q) => {
      await insert(q, 'straggler');
      inserted();
      await held;
    });
    await took;
    await insert(db, 'later');
    expect(await relay.drainOnce()).toBe(1);
    expect(await relay.drainOnce()).toBe(0);
    await insert(db, 'later-2');
    expect(await relay.drainOnce()).toBe(1);
    commit();
    await straggler;
    expect(await relay.drainOnce()).toBe(1);
    expect(await relay.drainOnce()).toBe(0);
    expect(published).toEqual(['before', 'later', 'later-2', 'straggler']);
    const { rows } = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM outbox WHERE published_at IS NULL`);
    expect(rows[0]?.n).toBe(0);
  });

  it("gathers the commits of a nudge's window into one claim", async () => {
    const { published } = await open();
    let claims = 0;
    const counting: Db = {
      ...db,
      kind: db.kind,
      close: () => db.close(),
      query: db.query,
      // A claim counts once it has run: the first, at start, is then over before the burst.
      tx: (fn) => db.tx((q) => fn({ ...q, query: (async (sql: string, params?: never) => { const r = await q.query(sql, params); if (sql.includes('UPDATE outbox')) claims++; return r; }) as Db['query'] })),
    };
    const bus = { kind: 'memory', publish: async (_s: string, _d: unknown, o?: { msgId?: string }) => void published.push(o?.msgId ?? '') } as unknown as Bus;
    const gatherMs = 500;
    const relay = new OutboxRelay(counting, bus, { gatherMs, pollMs: 60_000, fullScanMs: 3_600_000 });
    relay.start();
    // The first claim, at start, finds nothing; waited for, as on a loaded machine it may take longer than any set time.
    await waitFor(async () => claims > 0, 10_000, 'the first claim');
    const before = claims;
    const started = performance.now();
    for (let i = 0; i < 10; i++) {
      await insert(db, `burst-${i}`);
      relay.nudge();
      await new Promise((r) => setTimeout(r, 5)); // commits a few milliseconds apart, as under load
    }
    // On a loaded machine the burst itself may outlast one window; each window it spans may
    // claim once, which is still far from one claim per nudge (10 here).
    const windows = 1 + Math.floor((performance.now() - started) / gatherMs);
    await new Promise((r) => setTimeout(r, gatherMs + 400));
    // A loaded machine may still be publishing the window's claim.
    await waitFor(async () => published.length >= 10, 10_000, 'the burst published');
    await relay.stop();
    expect(published).toEqual(Array.from({ length: 10 }, (_, i) => `burst-${i}`));
    expect(claims - before).toBeGreaterThanOrEqual(1);
    expect(claims - before).toBeLessThanOrEqual(Math.min(windows, 9));
  });

  it('claims from the floor: index pages read per claim stay few however many published rows the outbox keeps', async () => {
    const { relay } = await open();
    await db.query(
      `INSERT INTO outbox (actor_id, msg_id, subject, payload) SELECT 'pay_x', 'bulk-' || i, 'fx.test', '{}'::jsonb FROM generate_series(1, 20000) i`,
    );
    while ((await relay.drainOnce()) > 0);
    const pages = async () => {
      await db.query('SELECT pg_stat_force_next_flush()');
      const { rows } = await db.query<{ n: string }>(
        `SELECT (idx_blks_hit + idx_blks_read)::text AS n FROM pg_statio_user_indexes WHERE schemaname = current_schema() AND indexrelname = 'outbox_pending'`,
      );
      return Number(rows[0]?.n ?? 0);
    };
    const before = await pages();
    for (let i = 0; i < 20; i++) {
      await insert(db, `new-${i}`);
      expect(await relay.drainOnce()).toBe(1);
    }
    // From the first id, each claim would walk the ~20,000 dead entries of published rows
    // (about 60 leaf pages); from the floor it reads a couple of pages.
    expect((await pages()) - before).toBeLessThan(20 * 8);
  });
});
