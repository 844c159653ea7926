/**
 * Imported first by every benchmark: with no DATABASE_URL given, benchmarks talk to the local
 * PostgreSQL over its Unix socket when it has one, as a service on the database's own host
 * would be deployed (each statement costs a loopback TCP round trip otherwise; figures in
 * docs/benchmarks.md). BENCH_TCP=1 keeps the TCP default of the tests.
 */
import { existsSync } from 'node:fs';
import pg from 'pg';

const SOCKET_DIR = '/var/run/postgresql';
if (!process.env.DATABASE_URL && !process.env.BENCH_TCP && existsSync(`${SOCKET_DIR}/.s.PGSQL.5432`)) {
  process.env.DATABASE_URL = `postgres://root@localhost/test?host=${encodeURIComponent(SOCKET_DIR)}`;
}

/**
 * System catalogs the test suites churn: every test schema adds and drops rows in them. A
 * server with autovacuum off (as CI's is) keeps the dead rows, and every statement's planning
 * then reads the bloated catalogs: 59 MB of `pg_attribute` for 3,054 live rows once cost
 * bench:purchase a fifth of its rate (docs/benchmarks.md). A bench starts on tidy catalogs.
 */
const CATALOGS = ['pg_attribute', 'pg_class', 'pg_type', 'pg_depend', 'pg_index', 'pg_constraint', 'pg_attrdef', 'pg_namespace', 'pg_statistic', 'pg_trigger', 'pg_sequence'];
const DEAD_ROWS_WORTH_A_VACUUM = 10_000;

async function tidyCatalogs(databaseUrl: string): Promise<void> {
  const c = new pg.Client({ connectionString: databaseUrl });
  try {
    await c.connect();
    const { rows } = await c.query<{ dead: string }>(`SELECT coalesce(sum(n_dead_tup), 0) AS dead FROM pg_stat_sys_tables WHERE schemaname = 'pg_catalog' AND relname = ANY($1)`, [CATALOGS]);
    const dead = Number(rows[0]?.dead ?? 0);
    if (dead < DEAD_ROWS_WORTH_A_VACUUM) return;
    const started = Date.now();
    await c.query(`VACUUM ${CATALOGS.map((t) => `pg_catalog.${t}`).join(', ')}`);
    console.log(`bench preflight: vacuumed the system catalogs (${dead.toLocaleString('en-US')} dead rows, ${Date.now() - started} ms)`);
  } catch (err) {
    // Not the catalogs' owner, or no server yet: the bench itself says what is wrong.
    console.log(`bench preflight: catalogs not vacuumed (${(err as Error).message})`);
  } finally {
    await c.end().catch(() => undefined);
  }
}

await tidyCatalogs(process.env.DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/test');

/** How the benchmark reaches PostgreSQL (`databaseUrl`: the one it uses), for its header line. */
export function databaseTransport(databaseUrl: string): string {
  const url = new URL(databaseUrl);
  const socket = url.searchParams.get('host');
  return socket ? `PostgreSQL over the Unix socket in ${socket}` : `PostgreSQL over TCP ${url.hostname}:${url.port || 5432}`;
}

/**
 * Names the bench's pool connections `app` (DATABASE_URL's application_name), so that their
 * PostgreSQL backends' CPU can be told from other users' of the server. Before the backends
 * helper is imported, which reads DATABASE_URL once.
 */
export function nameBackends(app: string): { app: string; databaseUrl: string } {
  const u = new URL(process.env.DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/test');
  u.searchParams.set('application_name', app);
  process.env.DATABASE_URL = u.toString();
  return { app, databaseUrl: process.env.DATABASE_URL };
}
