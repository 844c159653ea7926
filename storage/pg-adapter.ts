import { createHash } from 'node:crypto';
import pg from 'pg';
import type { Db, Queryable, QueryResult, SqlParam } from './db.ts';
import { toDriverParam } from './db.ts';

// int8 and numeric come back as strings; callers turn them into bigint where they mean money.
pg.types.setTypeParser(20, (v) => v);

export interface PgOptions {
  connectionString: string;
  max?: number;
  /** Schema to create and put first on the search path (tests isolate themselves this way). */
  schema?: string;
}

// Parameterised statements are prepared once per connection under a name derived from the
// text: the server then skips parsing and planning on every call (the engine's hot path).
const names = new Map<string, string>();
function statementName(sql: string): string {
  let name = names.get(sql);
  if (!name) {
    name = `s${createHash('sha1').update(sql).digest('hex').slice(0, 16)}`;
    if (names.size < 10_000) names.set(sql, name);
  }
  return name;
}

function wrap(client: pg.Pool | pg.PoolClient): Queryable {
  return {
    async query<Row>(sql: string, params: readonly SqlParam[] = []): Promise<QueryResult<Row>> {
      const values = params.map(toDriverParam);
      const res = values.length > 0 ? await client.query({ name: statementName(sql), text: sql, values }) : await client.query(sql);
      return { rows: res.rows as Row[], rowCount: res.rowCount ?? 0 };
    },
    async exec(sql: string): Promise<void> {
      await client.query(sql);
    },
  };
}

export async function openPg(opts: PgOptions): Promise<Db> {
  if (opts.schema && !/^[a-z_][a-z0-9_]*$/.test(opts.schema)) throw new Error('invalid schema name');
  if (opts.schema) {
    const admin = new pg.Client({ connectionString: opts.connectionString });
    await admin.connect();
    await admin.query(`CREATE SCHEMA IF NOT EXISTS ${opts.schema}`).finally(() => admin.end());
  }
  const pool = new pg.Pool({
    connectionString: opts.connectionString,
    max: opts.max ?? 16,
    ...(opts.schema ? { options: `-c search_path=${opts.schema}` } : {}),
  });
  // A dropped idle connection (server restart) must not crash the process; the pool reconnects.
  pool.on('error', () => undefined);
  const direct = wrap(pool);
  await direct.query('SELECT 1');
  return {
    kind: 'postgres',
    query: direct.query,
    exec: direct.exec,
    async tx<T>(fn: (q: Queryable) => Promise<T>): Promise<T> {
      const client = await pool.connect();
      let broken = false;
      // A connection lost while checked out (server restart) emits 'error' on the client; the
      // pool only listens on idle ones, so without this the process would crash.
      const onError = (): void => {
        broken = true;
      };
      client.on('error', onError);
      try {
        await client.query('BEGIN');
        const out = await fn(wrap(client));
        await client.query('COMMIT');
        return out;
      } catch (err) {
        try {
          await client.query('ROLLBACK');
        } catch {
          broken = true;
        }
        throw err;
      } finally {
        client.off('error', onError);
        client.release(broken);
      }
    },
    async close() {
      await pool.end();
    },
  };
}
