import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { connect } from 'nats';
import type { Db } from '../../storage/db.ts';
import { openDb } from '../../storage/open.ts';
import type { Bus } from '../../runtime/bus/types.ts';
import { MemoryBus } from '../../runtime/bus/memory-bus.ts';
import { NatsBus } from '../../runtime/bus/nats-bus.ts';

export const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/test';
export const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';

export async function postgresReachable(): Promise<boolean> {
  const c = new pg.Client({ connectionString: DATABASE_URL, connectionTimeoutMillis: 2000 });
  try {
    await c.connect();
    await c.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    await c.end().catch(() => undefined);
  }
}

export async function natsReachable(): Promise<boolean> {
  try {
    const nc = await connect({ servers: NATS_URL, timeout: 2000, reconnect: false });
    const jsm = await nc.jetstreamManager();
    await jsm.getAccountInfo();
    await nc.close();
    return true;
  } catch {
    return false;
  }
}

export interface Backend {
  name: 'postgres+nats' | 'pglite+memory';
  db: Db;
  bus: Bus;
  /** Namespace/schema for child processes that must join the same backend. */
  schema: string | undefined;
  namespace: string | undefined;
  close(): Promise<void>;
}

export function uniqueName(prefix: string): string {
  return `${prefix}_${randomBytes(5).toString('hex')}`;
}

export async function openReal(opts: { poolSize?: number } = {}): Promise<Backend> {
  const schema = uniqueName('t');
  const namespace = uniqueName('t');
  const db = await openDb({ databaseUrl: DATABASE_URL, schema, poolSize: opts.poolSize });
  const bus = await NatsBus.connect({ url: NATS_URL, namespace });
  return {
    name: 'postgres+nats',
    db,
    bus,
    schema,
    namespace,
    async close() {
      await bus.dispose();
      await bus.close();
      await db.query(`DROP SCHEMA ${schema} CASCADE`).catch(() => undefined);
      await db.close();
    },
  };
}

export async function openEmbedded(): Promise<Backend> {
  const db = await openDb({ dataDir: 'memory' });
  const bus = new MemoryBus();
  return {
    name: 'pglite+memory',
    db,
    bus,
    schema: undefined,
    namespace: undefined,
    async close() {
      await bus.close();
      await db.close();
    },
  };
}

/** The services decided once by the global setup (`test/global-setup.ts`). */
export const realAvailable = process.env.ANMPAY_TEST_REAL === '1';

/** Drops a schema a test's service created on the real PostgreSQL (its own connection: the service's pool is closed by then). */
export async function dropSchema(schema: string): Promise<void> {
  const { default: pg } = await import('pg');
  const c = new pg.Client({ connectionString: DATABASE_URL });
  await c.connect();
  try {
    await c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  } finally {
    await c.end();
  }
}

/** Backends every engine suite runs on: the real pair when reachable, the embedded pair always. */
export const backendFactories: Array<[string, () => Promise<Backend>]> = [
  ...(realAvailable ? ([['postgres+nats', () => openReal()]] as Array<[string, () => Promise<Backend>]>) : []),
  ['pglite+memory', openEmbedded],
];

export async function waitFor<T>(fn: () => Promise<T | undefined | null | false>, timeoutMs = 10_000, what = 'condition'): Promise<T> {
  const start = Date.now();
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
