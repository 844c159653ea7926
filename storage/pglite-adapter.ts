import { PGlite } from '@electric-sql/pglite';
import type { Db, Queryable, QueryResult, SqlParam } from './db.ts';
import { toDriverParam } from './db.ts';

interface PgliteLike {
  query<Row>(sql: string, params?: unknown[]): Promise<{ rows: Row[]; affectedRows?: number }>;
}

function wrap(conn: PgliteLike): Queryable {
  return {
    async query<Row>(sql: string, params: readonly SqlParam[] = []): Promise<QueryResult<Row>> {
      const res = await conn.query<Row>(sql, params.map(toDriverParam));
      return { rows: res.rows, rowCount: res.affectedRows ?? res.rows.length };
    },
  };
}

/** Embedded PostgreSQL (WASM). `dataDir` undefined keeps everything in memory (tests). */
export async function openPglite(dataDir?: string): Promise<Db> {
  const db = dataDir ? new PGlite(dataDir) : new PGlite();
  await db.waitReady;
  // PGlite returns int8 as bigint by default; the pg adapter returns strings. Keep both alike.
  const direct = wrap({
    query: (sql, params) => db.query(sql, params, { parsers: { 20: (v: string) => v } }),
  });
  return {
    kind: 'pglite',
    query: direct.query,
    async tx<T>(fn: (q: Queryable) => Promise<T>): Promise<T> {
      return db.transaction(async (t) =>
        fn(wrap({ query: (sql, params) => t.query(sql, params, { parsers: { 20: (v: string) => v } }) })),
      );
    },
    async close() {
      await db.close();
    },
  };
}
