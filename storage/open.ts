import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { Db } from './db.ts';
import { migrate } from './migrate.ts';
import { openPg } from './pg-adapter.ts';
import { openPglite } from './pglite-adapter.ts';

export interface StorageConfig {
  /** PostgreSQL connection string; absent means the embedded PGlite. */
  databaseUrl?: string | undefined;
  /** PGlite data directory; `memory` keeps it in memory. */
  dataDir?: string | undefined;
  poolSize?: number | undefined;
  schema?: string | undefined;
}

export async function openDb(cfg: StorageConfig): Promise<Db> {
  let db: Db;
  if (cfg.databaseUrl) {
    db = await openPg({ connectionString: cfg.databaseUrl, max: cfg.poolSize, schema: cfg.schema });
  } else if (cfg.dataDir === 'memory') {
    db = await openPglite();
  } else {
    const dir = path.resolve(cfg.dataDir ?? '.data/pg');
    await mkdir(dir, { recursive: true });
    db = await openPglite(dir);
  }
  await migrate(db);
  return db;
}
