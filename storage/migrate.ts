import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { Db, Queryable } from './db.ts';

const dir = fileURLToPath(new URL('./migrations/', import.meta.url));
// Any constant works; it only has to be the same in every process that migrates.
const MIGRATION_LOCK = 0x616e6d70;

export interface Migration {
  version: number;
  name: string;
  sql: string;
  /** SHA-256 of the file's text: an applied migration must never change (ADR 0021). */
  checksum: string;
}

/** Raised when the database's record of applied migrations disagrees with the files. */
export class MigrationMismatch extends Error {
  override readonly name = 'MigrationMismatch';
}

export async function loadMigrations(from: string = dir): Promise<Migration[]> {
  const files = (await readdir(from)).filter((f) => /^\d{4}_.+\.sql$/.test(f)).sort();
  return Promise.all(
    files.map(async (f) => {
      const sql = await readFile(from + f, 'utf8');
      return { version: Number(f.slice(0, 4)), name: f, sql, checksum: createHash('sha256').update(sql).digest('hex') };
    }),
  );
}

const REBUILD = 'No production database predates the fold of the migrations: rebuild this one (drop its schema or delete its data directory).';

/**
 * Refuses a database whose applied migrations are not a prefix of these files: one built by the
 * chain of migrations that existed before they were folded (its record has no checksums), one
 * whose migration file was edited after it was applied, or one missing a file these know of.
 * A database migrated by a newer release (versions above these files) is accepted: an older
 * process may run against it during a rolling deploy.
 */
async function checkApplied(q: Queryable, files: readonly Migration[]): Promise<Set<number>> {
  const cols = await q.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM pg_attribute WHERE attrelid = 'schema_migrations'::regclass AND attname = 'checksum' AND NOT attisdropped`,
  );
  if (cols.rows[0]?.n !== 1) throw new MigrationMismatch(`schema_migrations was written by the migrations before their fold. ${REBUILD}`);
  const { rows } = await q.query<{ version: number; name: string; checksum: string }>(`SELECT version, name, checksum FROM schema_migrations ORDER BY version`);
  const byVersion = new Map(files.map((m) => [m.version, m]));
  const last = files.at(-1)?.version ?? 0;
  for (const r of rows) {
    const m = byVersion.get(r.version);
    if (!m) {
      if (r.version < last) throw new MigrationMismatch(`applied migration ${r.name} has no file. ${REBUILD}`);
      continue;
    }
    if (m.name !== r.name || m.checksum !== r.checksum) {
      throw new MigrationMismatch(`migration ${m.name} differs from the ${r.name} this database applied; applied migrations are never edited (add a new one). ${REBUILD}`);
    }
  }
  return new Set(rows.map((r) => r.version));
}

/** Applies pending migrations in order, each in its own transaction, and records them. */
export async function migrate(db: Db, files?: readonly Migration[]): Promise<string[]> {
  const migrations = files ?? (await loadMigrations());
  await db.query(
    `CREATE TABLE IF NOT EXISTS schema_migrations (version integer PRIMARY KEY, name text NOT NULL, checksum text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`,
  );
  const applied: string[] = [];
  for (const m of migrations) {
    await db.tx(async (q) => {
      // Several processes may start at once against one database; one migrates, the rest wait.
      await q.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
      if ((await checkApplied(q, migrations)).has(m.version)) return;
      await q.exec(m.sql);
      await q.query('INSERT INTO schema_migrations (version, name, checksum) VALUES ($1, $2, $3)', [m.version, m.name, m.checksum]);
      applied.push(m.name);
    });
  }
  return applied;
}
