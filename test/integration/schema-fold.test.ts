/**
 * The folded migrations (storage/migrations, one file per concern) build the schema the old
 * chain of seventeen migrations built (kept in test/fixtures/migrations-legacy), except for the
 * changes listed in EXPECTED_DELTA, each made on purpose. Compared with `pg_dump --schema-only`
 * and with a catalog dump on PostgreSQL, and with the catalog dump on PGlite.
 */
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import type { Db } from '../../storage/db.ts';
import { loadMigrations, migrate, MigrationMismatch, type Migration } from '../../storage/migrate.ts';
import { openPg } from '../../storage/pg-adapter.ts';
import { openPglite } from '../../storage/pglite-adapter.ts';
import { DATABASE_URL, realAvailable, uniqueName } from '../helpers/backends.ts';
import { catalogDump, pgDump, schemaDelta, type Delta } from '../helpers/schema-dump.ts';

const LEGACY = fileURLToPath(new URL('../fixtures/migrations-legacy/', import.meta.url));

const GATE_LEASE =
  'anm_gate_lease(text, integer, text, double precision, double precision, double precision, text, text[], double precision[], text, ' +
  'double precision, double precision, boolean, double precision, text, text[], double precision[], text, text, text, integer, text)';

/** Every difference between the old chain's schema and the folded one, and why. */
const EXPECTED_DELTA: Delta = {
  // DESIGN §2 "Past one PostgreSQL": actor_id in the keys of every actor-scoped table.
  'CONSTRAINT outbox outbox_pkey': 'changed',
  'CONSTRAINT chain_refs chain_refs_pkey': 'changed',
  // notified_head was no longer written once depth came from the cursor (ADR 0010), and the
  // fill factor served only its updates (inclusion_pos, added last, now follows required).
  'TABLE chain_watch': 'changed',
  // Functions no code called since leases replaced them (ADR 0004).
  'FUNCTION anm_gate(text, double precision, double precision, text, double precision, double precision, text, text, text, integer, text)': 'removed',
  'FUNCTION anm_take_token(text, double precision, double precision)': 'removed',
  'FUNCTION anm_idempotency_done(text, text, text, integer, jsonb, bytea)': 'removed',
  // Reads the key through anm_secret_key instead of a copy of its query.
  [`FUNCTION ${GATE_LEASE}`]: 'changed',
};

/** Tables that carry an actor id without being scoped to that actor, with the reason. */
const NOT_ACTOR_SCOPED = new Set([
  // A merchant's webhook facts, keyed by event id; actor_id only says which actor emitted it.
  'webhook_events',
]);

/** The folded files; later concerns (0005_market.sql, …) were never part of the old chain. */
async function foldedFiles(): Promise<Migration[]> {
  return (await loadMigrations()).filter((m) => m.version <= 4);
}

async function buildLegacy(db: Db): Promise<void> {
  for (const m of await loadMigrations(LEGACY)) await db.exec(m.sql);
}

function checkDelta(legacy: Map<string, string>, folded: Map<string, string>): void {
  expect(schemaDelta(legacy, folded)).toEqual(EXPECTED_DELTA);
  // The intended changes, one by one (a catalog dump or pg_dump text, whitespace collapsed).
  expect(legacy.get('TABLE chain_watch')).toMatch(/notified_head integer.*fillfactor.?=.?'?50/);
  expect(folded.get('TABLE chain_watch')).not.toMatch(/notified_head|fillfactor/);
  expect(folded.get('CONSTRAINT outbox outbox_pkey')).toContain('PRIMARY KEY (id, actor_id)');
  expect(folded.get('CONSTRAINT chain_refs chain_refs_pkey')).toContain('PRIMARY KEY (reference, actor_id)');
  expect(folded.get(`FUNCTION ${GATE_LEASE}`)).toContain('FROM anm_secret_key(p_key_hash) k');
}

/** Actor-scoped tables keep actor_id in every primary and unique key (actors: its id). */
async function keysCarryActorId(db: Db): Promise<string[]> {
  const { rows } = await db.query<{ tbl: string; con: string; cols: string[] }>(`
    SELECT t.relname AS tbl, k.conname AS con, array_agg(a.attname::text ORDER BY a.attnum) AS cols
      FROM pg_constraint k JOIN pg_class t ON t.oid = k.conrelid
      JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = ANY(k.conkey)
     WHERE k.contype IN ('p', 'u') AND t.relnamespace = current_schema()::regnamespace
       AND (t.relname = 'actors' OR EXISTS (SELECT 1 FROM pg_attribute c WHERE c.attrelid = t.oid AND c.attname = 'actor_id' AND NOT c.attisdropped))
     GROUP BY t.relname, k.conname ORDER BY 1, 2`);
  const scoped = rows.filter((r) => !NOT_ACTOR_SCOPED.has(r.tbl));
  for (const r of scoped) expect(r.cols, `${r.tbl}.${r.con}`).toContain(r.tbl === 'actors' ? 'id' : 'actor_id');
  return scoped.map((r) => r.tbl);
}

const ACTOR_TABLES = ['actor_events', 'actors', 'chain_refs', 'chain_watch', 'outbox', 'processed_events', 'timers'];

describe('folded migrations on PGlite', () => {
  it('build the old chain’s schema but for the listed changes (catalog dump)', async () => {
    const legacy = await openPglite();
    const folded = await openPglite();
    try {
      await buildLegacy(legacy);
      expect(await migrate(folded, await foldedFiles())).toEqual(['0001_engine.sql', '0002_merchants.sql', '0003_chain.sql', '0004_webhooks.sql']);
      checkDelta(await catalogDump(legacy), await catalogDump(folded));
      expect(await keysCarryActorId(folded)).toEqual(expect.arrayContaining(ACTOR_TABLES));
      // Applied again: nothing to do.
      expect(await migrate(folded, await foldedFiles())).toEqual([]);
    } finally {
      await Promise.all([legacy.close(), folded.close()]);
    }
  }, 60_000);

  it('refuse a database built by the old chain, an edited migration and a missing one', async () => {
    const db = await openPglite();
    try {
      const files = await loadMigrations();
      // The tracking table as the old chain left it, without checksums.
      await db.exec(`CREATE TABLE schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now());
        INSERT INTO schema_migrations (version, name) VALUES (1, '0001_engine.sql'), (5, '0005_gate_perf.sql')`);
      await expect(migrate(db, files)).rejects.toThrow(/before their fold/);
      await db.exec('DROP TABLE schema_migrations');
      await migrate(db, files.slice(0, 2));
      const edited = files.map((m, i) => (i === 1 ? { ...m, sql: `${m.sql}\n`, checksum: 'x' } : m));
      await expect(migrate(db, edited)).rejects.toThrow(MigrationMismatch);
      await expect(migrate(db, [files[0]!, ...files.slice(2)])).rejects.toThrow(/0002_merchants.sql has no file/);
      // A database a newer release migrated further is accepted by an older process.
      expect(await migrate(db, files.slice(0, 1))).toEqual([]);
    } finally {
      await db.close();
    }
  }, 60_000);
});

describe.skipIf(!realAvailable)('folded migrations on PostgreSQL', () => {
  const schemas: string[] = [];
  afterAll(async () => {
    const c = new pg.Client({ connectionString: DATABASE_URL });
    await c.connect();
    for (const s of schemas) await c.query(`DROP SCHEMA IF EXISTS ${s} CASCADE`);
    await c.end();
  });

  it('build the old chain’s schema but for the listed changes (pg_dump --schema-only and catalog dump)', async () => {
    const [ls, fs] = [uniqueName('legacy'), uniqueName('folded')];
    schemas.push(ls, fs);
    const legacy = await openPg({ connectionString: DATABASE_URL, schema: ls, max: 1 });
    const folded = await openPg({ connectionString: DATABASE_URL, schema: fs, max: 1 });
    try {
      await buildLegacy(legacy);
      await migrate(folded, await foldedFiles());
      const [a, b] = await Promise.all([pgDump(DATABASE_URL, ls), pgDump(DATABASE_URL, fs)]);
      // The comparison must have seen the whole schema, functions included.
      expect([...b.keys()].filter((k) => k.startsWith('FUNCTION ')).length).toBe(8);
      checkDelta(a, b);
      checkDelta(await catalogDump(legacy), await catalogDump(folded));
      expect(await keysCarryActorId(folded)).toEqual(expect.arrayContaining(ACTOR_TABLES));
    } finally {
      await Promise.all([legacy.close(), folded.close()]);
    }
  }, 60_000);
});
