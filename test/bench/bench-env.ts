/**
 * Imported first by every benchmark: with no DATABASE_URL given, benchmarks talk to the local
 * PostgreSQL over its Unix socket when it has one, as a service on the database's own host
 * would be deployed (each statement costs a loopback TCP round trip otherwise; figures in
 * docs/benchmarks.md). BENCH_TCP=1 keeps the TCP default of the tests.
 */
import { existsSync } from 'node:fs';

const SOCKET_DIR = '/var/run/postgresql';
if (!process.env.DATABASE_URL && !process.env.BENCH_TCP && existsSync(`${SOCKET_DIR}/.s.PGSQL.5432`)) {
  process.env.DATABASE_URL = `postgres://root@localhost/test?host=${encodeURIComponent(SOCKET_DIR)}`;
}

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
