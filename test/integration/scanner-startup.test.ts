/**
 * Listings from before the scanner (DESIGN §5 "Scanner"; ADR 0036, 0043): a listing actor
 * written by older code has no probe timer row, so no round would ever come. Each runtime that
 * scans gives such listings their rounds back on start, through the listing actor
 * (`listing.resume_probes`), the first round within one interval at random. Two runtime
 * processes starting together over one PostgreSQL and NATS resume a listing once and leave
 * one timer; the round then probes the seller.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServices, type Services } from '../../bin/services.ts';
import type { ListingContext } from '../../machines/listing/context.ts';
import { MemoryBus } from '../../runtime/bus/memory-bus.ts';
import { ActorHost } from '../../runtime/engine/actor-host.ts';
import { machineRegistry } from '../../runtime/machines.ts';
import { Listings } from '../../runtime/market/listings.ts';
import type { Db } from '../../storage/db.ts';
import { openDb } from '../../storage/open.ts';
import { DATABASE_URL, dropSchema, NATS_URL, realAvailable, uniqueName, waitFor } from '../helpers/backends.ts';
import { inProcessConfig } from '../helpers/service-config.ts';
import { seller, signedListing } from '../fixtures/market.ts';

const INTERVAL_S = 10;
const schema = uniqueName('resume');
let db: Db;
let server: http.Server;
const hits = new Map<string, number>();
let dataDir: string;
const running: Services[] = [];

beforeAll(async () => {
  if (!realAvailable) return;
  db = await openDb({ databaseUrl: DATABASE_URL, schema, poolSize: 2 });
  dataDir = await mkdtemp(path.join(tmpdir(), 'anmpay-resume-'));
  server = http.createServer((req, res) => {
    hits.set(req.url ?? '', (hits.get(req.url ?? '') ?? 0) + 1);
    res.writeHead(402, { 'content-type': 'application/json' }).end('{"x402Version":1,"error":"payment required","accepts":[]}');
  });
  server.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
});

afterAll(async () => {
  for (const s of running.splice(0)) await s.stop();
  server?.closeAllConnections();
  await new Promise((r) => server?.close(r));
  await db?.close();
  if (realAvailable) await dropSchema(schema);
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

/** A runtime process's services (the runtime role alone) over the test's schema and NATS namespace. */
const runtime = (): Promise<Services> =>
  startServices(
    inProcessConfig(dataDir, `opt_${randomBytes(16).toString('hex')}`, {
      ANMPAY_ROLES: 'runtime',
      DATABASE_URL,
      ANMPAY_DB_SCHEMA: schema,
      NATS_URL,
      NATS_NAMESPACE: schema,
      ANMPAY_ALLOW_PRIVATE_WEBHOOKS: '1',
      ANMPAY_SCAN_INTERVAL_S: String(INTERVAL_S),
    }),
  );

const probeTimers = async (id: string) =>
  (await db.query<{ fire_ms: string; generation: number }>(`SELECT (extract(epoch FROM fire_at) * 1000)::bigint AS fire_ms, generation FROM timers WHERE actor_id = $1 AND name = 'probe'`, [id])).rows;

describe.skipIf(!realAvailable)('probe rounds of listings from before the scanner', () => {
  it('two runtimes starting together give the listing one probe timer, within one interval, by one event; the round probes the seller', async () => {
    // A listing as older code left it: registered, no scan state, no probe timer row.
    const host = new ActorHost({ db, bus: new MemoryBus(), registry: machineRegistry() });
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const { record } = await new Listings(db, host).register(await signedListing(seller(), { name: 'Old timer', endpoint: `${base}/old`, price: '0.02' }));
    const id = record.resource_id;
    await db.query(`UPDATE actors SET snapshot = snapshot #- '{context,scan}' WHERE id = $1`, [id]);
    await db.query(`DELETE FROM timers WHERE actor_id = $1`, [id]);
    // The listing that already has its rounds is left alone.
    const { record: kept } = await new Listings(db, host).register(await signedListing(seller(), { name: 'Young timer', endpoint: `${base}/young`, price: '0.02' }));
    const keptTimer = await probeTimers(kept.resource_id);
    expect(keptTimer).toHaveLength(1);

    const started = Date.now();
    running.push(...(await Promise.all([runtime(), runtime()])));
    const [timer] = await waitFor(async () => {
      const rows = await probeTimers(id);
      return rows.length > 0 && rows;
    }, 20_000, 'a probe timer for the old listing');
    expect(Number(timer!.fire_ms)).toBeGreaterThanOrEqual(started - 1_000);
    expect(Number(timer!.fire_ms)).toBeLessThanOrEqual(Date.now() + INTERVAL_S * 1000);
    expect(await probeTimers(kept.resource_id)).toEqual(keptTimer);
    const resumed = await db.query(`SELECT 1 FROM actor_events WHERE actor_id = $1 AND event->>'type' = 'listing.resume_probes'`, [id]);
    expect(resumed.rowCount).toBe(1);

    // The round comes due (as if the jitter had passed): one of the runtimes probes the seller.
    await db.query(`UPDATE timers SET fire_at = now() WHERE actor_id = $1 AND name = 'probe'`, [id]);
    const observed = await waitFor(async () => {
      const { rows } = await db.query<{ snapshot: { context: ListingContext } }>(`SELECT snapshot FROM actors WHERE id = $1`, [id]);
      const scan = rows[0]?.snapshot.context.scan;
      return scan && scan.recent.length > 0 && scan;
    }, 20_000, 'a probe of the old listing');
    expect(observed.recent).toHaveLength(1);
    expect(hits.get('/old')).toBe(1);
    // The next round is scheduled again, one timer still.
    expect(await probeTimers(id)).toHaveLength(1);
  }, 60_000);
});
