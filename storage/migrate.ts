import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { Db } from './db.ts';

const dir = fileURLToPath(new URL('./migrations/', import.meta.url));
// Any constant works; it only has to be the same in every process that migrates.
const MIGRATION_LOCK = 0x616e6d70;

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export async function loadMigrations(): Promise<Migration[]> {
  const files = (await readdir(dir)).filter((f) => /^\d{4}_.+\.sql$/.test(f)).sort();
  return Promise.all(
    files.map(async (f) => ({ version: Number(f.slice(0, 4)), name: f, sql: await readFile(dir + f, 'utf8') })),
  );
}

/** Applies pending migrations in order, each in its own transaction, and records them. */
export async function migrate(db: Db): Promise<string[]> {
  await db.query(
    `CREATE TABLE IF NOT EXISTS schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`,
  );
  const applied: string[] = [];
  for (const m of await loadMigrations()) {
    await db.tx(async (q) => {
      // Several processes may start at once against one database; one migrates, the rest wait.
      await q.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
      const done = await q.query('SELECT 1 FROM schema_migrations WHERE version = $1', [m.version]);
      if (done.rowCount > 0) return;
      await q.exec(m.sql);
      await q.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [m.version, m.name]);
      applied.push(m.name);
    });
  }
  return applied;
}
