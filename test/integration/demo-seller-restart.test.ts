/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-call --
   assertions read the marketplace's JSON. */
/**
 * A restart of a service that serves the demo seller (DESIGN §6) over the real PostgreSQL and
 * NATS, after its listings' rounds came due while it was down: the runtime's sweeper fires them
 * at once, before the demo seller listens again, and the scanner must not record its own seller
 * as `unreachable` (which would leave the demo listings `degraded` for five rounds, DESIGN §5
 * "Scanner"). The rounds are probed once it listens: `ok`. The restart is a process of its own,
 * as `npm start` is: its seller packages load afresh, which takes a while.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ListingContext } from '../../machines/listing/context.ts';
import { startServices, type Services } from '../../bin/services.ts';
import type { Config } from '../../runtime/config.ts';
import type { Db } from '../../storage/db.ts';
import { openDb } from '../../storage/open.ts';
import { DATABASE_URL, dropSchema, NATS_URL, realAvailable, uniqueName, waitFor } from '../helpers/backends.ts';
import { freePort } from '../helpers/free-port.ts';
import { inProcessConfig } from '../helpers/service-config.ts';
import { ServiceProcess } from '../helpers/service-process.ts';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const schema = uniqueName('demorestart');
let dataDir: string;
let config: Config;
let services: Services | undefined;
let restarted: ServiceProcess | undefined;
let db: Db;
let demoPort = 0;

beforeAll(async () => {
  if (!realAvailable) return;
  dataDir = await mkdtemp(path.join(tmpdir(), 'anmpay-demo-restart-'));
  config = inProcessConfig(dataDir, `opt_${randomBytes(16).toString('hex')}`, {
    DATABASE_URL, NATS_URL, ANMPAY_DB_SCHEMA: schema, NATS_NAMESPACE: schema, ANMPAY_DEMO_SELLER: '1', DEMO_SELLER_PORT: String((demoPort = await freePort())),
  });
  db = await openDb({ databaseUrl: DATABASE_URL, schema, poolSize: 2 });
}, 60_000);

afterAll(async () => {
  await services?.stop();
  await restarted?.stop();
  await db?.close();
  if (realAvailable) await dropSchema(schema);
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

const scans = async (): Promise<Map<string, ListingContext['scan']>> => {
  const { rows } = await db.query<{ id: string; snapshot: { context: ListingContext } }>(`SELECT id, snapshot FROM actors WHERE kind = 'listing'`);
  return new Map(rows.map((r) => [r.id, r.snapshot.context.scan]));
};

describe.skipIf(!realAvailable)('a restart with the demo listings\' rounds overdue', () => {
  it('probes them once the demo seller listens: ok, never unreachable', { timeout: 180_000 }, async () => {
    services = await startServices(config);
    const ids = ((await (await fetch(`${services.marketplace!.url}/api/v1/resources`)).json()) as Json).data.map((l: Json) => l.resource_id as string) as string[];
    expect(ids).toHaveLength(2);
    await services.stop();
    services = undefined;
    // Down for longer than a round: every probe timer is due when the service comes back.
    await db.query(`UPDATE timers SET fire_at = now() - interval '1 hour' WHERE name = 'probe'`);
    const before = await scans();
    restarted = ServiceProcess.spawn('restarted', {
      DATABASE_URL, NATS_URL, ANMPAY_DB_SCHEMA: schema, NATS_NAMESPACE: schema, ANMPAY_DATA_DIR: dataDir, LOG_LEVEL: 'info',
      ANMPAY_DEMO_SELLER: '1', DEMO_SELLER_PORT: String(demoPort), PORT: '0', MARKETPLACE_PORT: '0', DEVNET_PORT: '0', DEVNET_BLOCK_MS: '0',
      ANMPAY_OPERATOR_TOKEN: config.ANMPAY_OPERATOR_TOKEN!, ANMPAY_KEY_PEPPER: config.ANMPAY_KEY_PEPPER!,
    });
    const after = await waitFor(async () => {
      const now = await scans();
      return ids.every((id) => (now.get(id)?.recent.length ?? 0) > (before.get(id)?.recent.length ?? 0)) ? now : undefined;
    }, 60_000, 'a probe of each demo listing after the restart');
    for (const id of ids) {
      const newest = after.get(id)!.recent[0]!;
      expect(newest.outcome, `${id}: ${newest.detail}`).toBe('ok');
    }
  });
});
