import { PGlite } from '@electric-sql/pglite';
import type { Db, Queryable, QueryResult, SqlParam } from './db.ts';
import { toDriverParam } from './db.ts';

interface PgliteLike {
  query<Row>(sql: string, params?: unknown[]): Promise<{ rows: Row[]; affectedRows?: number }>;
  exec(sql: string): Promise<unknown>;
}

function wrap(conn: PgliteLike): Queryable {
  return {
    async query<Row>(sql: string, params: readonly SqlParam[] = []): Promise<QueryResult<Row>> {
      const res = await conn.query<Row>(sql, params.map(toDriverParam));
      // PGlite reports affectedRows = 0 for a SELECT; pg's rowCount counts returned rows there.
      return { rows: res.rows, rowCount: Math.max(res.rows.length, res.affectedRows ?? 0) };
    },
    async exec(sql: string): Promise<void> {
      await conn.exec(sql);
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
    exec: (sql) => db.exec(sql),
  });
  return {
    kind: 'pglite',
    query: direct.query,
    exec: direct.exec,
    async tx<T>(fn: (q: Queryable) => Promise<T>): Promise<T> {
      return db.transaction(async (t) =>
        fn(wrap({ query: (sql, params) => t.query(sql, params, { parsers: { 20: (v: string) => v } }), exec: (sql) => t.exec(sql) })),
      );
    },
    async close() {
      await db.close();
    },
  };
}
