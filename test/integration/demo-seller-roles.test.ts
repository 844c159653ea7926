/**
 * The demo seller with the roles split (issue 21; ADR 0037, 0073): one process runs the
 * `marketplace` role and serves the demo seller, another runs `runtime` alone, over one
 * PostgreSQL and NATS. The probe rounds are the runtime's (DESIGN §5 "Scanner": the timer
 * sweeper applies `listing.probe_due` and that process probes), and the runtime has no demo
 * seller of its own: it reaches the demo seller's origin because the marketplace recorded it,
 * and nothing else on loopback ("Private, loopback, link-local and other non-public targets
 * are refused", docs/marketplace.md "Routed execution" 5).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ListingContext } from '../../machines/listing/context.ts';
import type { ScanEntry } from '../../machines/listing/score.ts';
import type { Db } from '../../storage/db.ts';
import { openDb } from '../../storage/open.ts';
import { DATABASE_URL, dropSchema, NATS_URL, realAvailable, uniqueName, waitFor } from '../helpers/backends.ts';
import { freePort } from '../helpers/free-port.ts';
import { marketplaceRoleEnv } from '../helpers/service-config.ts';
import { ServiceProcess } from '../helpers/service-process.ts';
import { seller, signedListing } from '../fixtures/market.ts';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- parsed response bodies

const schema = uniqueName('demoroles');
let db: Db;
let dataDir: string;
let other: http.Server;
let otherHits = 0;
const procs: ServiceProcess[] = [];

beforeAll(async () => {
  if (!realAvailable) return;
  db = await openDb({ databaseUrl: DATABASE_URL, schema, poolSize: 2 });
  dataDir = await mkdtemp(path.join(tmpdir(), 'anmpay-demo-roles-'));
  // A loopback seller that answers a proper 402: refused only for where it is, never for what it says.
  other = http.createServer((_req, res) => {
    otherHits++;
    res.writeHead(402, { 'content-type': 'application/json' }).end('{"x402Version":1,"error":"payment required","accepts":[]}');
  });
  await new Promise<void>((r) => other.listen(0, '127.0.0.1', r));
});

afterAll(async () => {
  for (const p of procs.splice(0)) await p.stop();
  await new Promise((r) => other?.close(r));
  await db?.close();
  if (realAvailable) await dropSchema(schema);
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

const latestScan = async (id: string): Promise<ScanEntry | undefined> => {
  const { rows } = await db.query<{ snapshot: { context: ListingContext } }>(`SELECT snapshot FROM actors WHERE id = $1`, [id]);
  return rows[0]?.snapshot.context.scan?.recent[0];
};

describe.skipIf(!realAvailable)('the demo seller probed by a runtime process that does not serve it', () => {
  it('the runtime reaches exactly the origin the marketplace recorded: the demo listings verify, other loopback targets stay refused', { timeout: 120_000 }, async () => {
    const demoPort = await freePort();
    const shared = { ANMPAY_DATA_DIR: dataDir, LOG_LEVEL: 'info' };
    const market = ServiceProcess.spawn('marketplace', { ...marketplaceRoleEnv(schema), ...shared, ANMPAY_DEMO_SELLER: '1', DEMO_SELLER_PORT: String(demoPort) });
    procs.push(market);
    const demoOrigin = `http://127.0.0.1:${demoPort}`;
    await market.waitForLog(new RegExp(`^demo seller at ${demoOrigin} .*listings res_`), 60_000);
    const marketUrl = (await market.waitForLog(/^marketplace listening on /)).replace('marketplace listening on ', '');
    const runtime = ServiceProcess.spawn('runtime', { ANMPAY_ROLES: 'runtime', DATABASE_URL, NATS_URL, ANMPAY_DB_SCHEMA: schema, NATS_NAMESPACE: schema, ...shared });
    procs.push(runtime);
    await runtime.waitForLog(/^roles: runtime;/);

    const demo = ((await (await fetch(`${marketUrl}/api/v1/resources`)).json()) as Json).data as Json[];
    expect(demo.map((l) => new URL(l.endpoint as string).origin)).toEqual([demoOrigin, demoOrigin]);
    // Listed by a seller of the test: the demo seller's port by name, and another loopback port.
    const register = async (endpoint: string): Promise<string> => {
      const res = await fetch(`${marketUrl}/api/v1/resources`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(await signedListing(seller(), { endpoint })) });
      expect(res.status).toBe(201);
      return ((await res.json()) as Json).resource_id as string;
    };
    const cases: Array<{ what: string; id: string; outcome: 'ok' | 'refused' }> = [
      ...demo.map((l) => ({ what: `demo ${l.method as string} ${l.endpoint as string}`, id: l.resource_id as string, outcome: 'ok' as const })),
      { what: 'the demo port by name', id: await register(`http://localhost:${demoPort}/echo`), outcome: 'refused' },
      { what: 'another loopback port', id: await register(`http://127.0.0.1:${(other.address() as AddressInfo).port}/paid`), outcome: 'refused' },
    ];

    // Every round comes due now (as if its jitter had passed); only the runtime's sweeper fires them.
    await db.query(`UPDATE timers SET fire_at = now() WHERE name = 'probe'`);
    for (const c of cases) {
      const scan = await waitFor(() => latestScan(c.id), 30_000, `a probe of ${c.what}`);
      expect(scan.outcome, `${c.what}: ${scan.detail}`).toBe(c.outcome);
      if (c.outcome === 'ok') expect(scan.http_status, c.what).toBe(402);
      else expect(scan.detail, c.what).toMatch(/loopback/);
    }
    expect(otherHits).toBe(0);
    const verified = ((await (await fetch(`${marketUrl}/api/v1/resources`)).json()) as Json).data as Json[];
    for (const l of demo) expect(verified.find((v) => v.resource_id === l.resource_id)?.status, l.endpoint as string).toBe('verified');
  });
});
