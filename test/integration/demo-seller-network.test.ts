/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-return --
   assertions read the CLI's and the marketplace's JSON. */
/**
 * The demo seller and the scanner on a USDC lane on another chain than Base (README
 * "Configuration": `USDC_NETWORK=eip155:84532`, Base Sepolia), over the real PostgreSQL and
 * NATS: the service starts, its demo seller's 402s offer the lane the marketplace runs (v2 by
 * its CAIP-2 id, v1 as `base-sepolia`), the scanner verifies both listings against that lane
 * (DESIGN §5 "Scanner": requirements that match the listing's price, asset and payTo), and
 * `anmpay market execute` completes a routed execution of each (DESIGN §6: "discovery, quote,
 * purchase and routed execution work out of the box").
 * Then a restart after the listings' rounds came due while the service was down: the runtime's
 * sweeper fires them at once, before the demo seller listens again, and the scanner must not
 * record its own seller as `unreachable` (which would leave the demo listings `degraded` for
 * five rounds). The restart is a process of its own, as `npm start` is: its seller packages
 * load afresh, which takes a while.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { decodePaymentRequiredHeader } from '@x402/core/http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ListingContext } from '../../machines/listing/context.ts';
import { startServices, type Services } from '../../bin/services.ts';
import type { Config } from '../../runtime/config.ts';
import { openDb } from '../../storage/open.ts';
import { DATABASE_URL, dropSchema, NATS_URL, realAvailable, uniqueName, waitFor } from '../helpers/backends.ts';
import { cliJson } from '../helpers/cli.ts';
import { freePort } from '../helpers/free-port.ts';
import { inProcessConfig } from '../helpers/service-config.ts';
import { ServiceProcess } from '../helpers/service-process.ts';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const schema = uniqueName('demonet');
let dataDir: string;
let config: Config;
let services: Services | undefined;
let restarted: ServiceProcess | undefined;
let env: Record<string, string>;

beforeAll(async () => {
  if (!realAvailable) return;
  dataDir = await mkdtemp(path.join(tmpdir(), 'anmpay-demo-network-'));
  env = {
    DATABASE_URL, NATS_URL, ANMPAY_DB_SCHEMA: schema, NATS_NAMESPACE: schema,
    ANMPAY_DEMO_SELLER: '1', DEMO_SELLER_PORT: String(await freePort()), USDC_NETWORK: 'eip155:84532',
  };
  config = inProcessConfig(dataDir, `opt_${randomBytes(16).toString('hex')}`, env);
  services = await startServices(config);
}, 180_000);

afterAll(async () => {
  await services?.stop();
  await restarted?.stop();
  if (realAvailable) await dropSchema(schema);
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

const svc = (): Services => services!;
const market = (p: string): Promise<Json> => fetch(`${svc().marketplace!.url}${p}`).then((r) => r.json() as Promise<Json>);

describe.skipIf(!realAvailable)('the demo seller with USDC_NETWORK=eip155:84532', () => {
  it("offers the marketplace's lane: the v2 echo on eip155:84532, the v1 quote on base-sepolia, with the lane's token", async () => {
    const token = svc().marketplace!.market.usdc.token.address;
    const echo = await fetch(`${svc().demoSeller!.url}/echo`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(echo.status).toBe(402);
    const v2 = decodePaymentRequiredHeader(echo.headers.get('payment-required')!);
    expect(v2.accepts.find((a) => a.scheme === 'exact')).toMatchObject({ network: 'eip155:84532', asset: token });
    const quote = await fetch(`${svc().demoSeller!.url}/v1/quote-of-the-day`);
    expect(quote.status).toBe(402);
    expect(((await quote.json()) as Json).accepts[0]).toMatchObject({ network: 'base-sepolia', asset: token });
    const listed = (await market('/api/v1/resources')).data as Json[];
    expect(listed.map((l) => l.pricing.network)).toEqual(['eip155:84532', 'eip155:84532']);
  });

  it("the scanner's probes find both 402s matching the listings: ok, and verified", async () => {
    for (const l of (await market('/api/v1/resources')).data as Json[]) {
      const res = await fetch(`${svc().marketplace!.url}/api/v1/resources/${l.resource_id}/scan`, { method: 'POST', headers: { authorization: `Bearer ${config.ANMPAY_OPERATOR_TOKEN}` } });
      const scanned = (await res.json()) as Json;
      expect(scanned.scan, l.endpoint as string).toMatchObject({ outcome: 'ok', status: 402 });
      expect(scanned.listing.status, l.endpoint as string).toBe('verified');
    }
  });

  it('`anmpay market execute` buys a call of each endpoint: the seller answers and the purchase settles', { timeout: 120_000 }, async () => {
    const key = path.join(dataDir, 'buyer.json');
    const env = { ANMPAY_MARKET_URL: svc().marketplace!.url, ANMPAY_DATA_DIR: dataDir };
    const buyer = (await cliJson<Json>(['usdc', 'create', '--out', key], env)).address as string;
    await svc().marketplace!.market.ledger.fund(buyer, 1_000_000n);
    for (const [capability, header] of [['echo', 'payment-response'], ['quote', 'x-payment-response']] as const) {
      const run = await cliJson<Json>(['market', 'execute', capability, '--body', '{"text":"hello"}', '--key', key], env);
      expect(run, capability).toMatchObject({ status: 200, purchase_status: 'EXECUTING' });
      expect(run.headers[header], capability).toBeTruthy();
      await waitFor(async () => (await market(`/api/v1/purchases/${run.intent_id as string}`)).status === 'SETTLED', 10_000, `${capability} settled`);
    }
  });

  it('after a restart with their rounds overdue, probes them once the demo seller listens: ok, never unreachable', { timeout: 120_000 }, async () => {
    const ids = ((await market('/api/v1/resources')).data as Json[]).map((l) => l.resource_id as string);
    await svc().stop();
    services = undefined;
    const own = await openDb({ databaseUrl: DATABASE_URL, schema, poolSize: 2 });
    try {
      // Down for longer than a round: every probe timer is due when the service comes back.
      await own.query(`UPDATE timers SET fire_at = now() - interval '1 hour' WHERE name = 'probe'`);
      const read = async () => new Map((await own.query<{ id: string; snapshot: { context: ListingContext } }>(`SELECT id, snapshot FROM actors WHERE kind = 'listing'`)).rows.map((r) => [r.id, r.snapshot.context.scan?.recent ?? []]));
      const before = await read();
      restarted = ServiceProcess.spawn('restarted', {
        ...env, ANMPAY_DATA_DIR: dataDir, LOG_LEVEL: 'info', PORT: '0', MARKETPLACE_PORT: '0', DEVNET_PORT: '0', DEVNET_BLOCK_MS: '0',
        ANMPAY_OPERATOR_TOKEN: config.ANMPAY_OPERATOR_TOKEN!, ANMPAY_KEY_PEPPER: config.ANMPAY_KEY_PEPPER!,
      });
      const after = await waitFor(async () => {
        const now = await read();
        return ids.every((id) => (now.get(id)?.length ?? 0) > (before.get(id)?.length ?? 0)) ? now : undefined;
      }, 60_000, 'a probe of each demo listing after the restart');
      for (const id of ids) expect(after.get(id)![0]!.outcome, `${id}: ${after.get(id)![0]!.detail}`).toBe('ok');
    } finally {
      await own.close();
    }
  });
});
