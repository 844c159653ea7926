/**
 * The demo seller's wiring (DESIGN §6, ADR 0037): its keys from `settings`, its app on
 * DEMO_SELLER_PORT settling through this process's marketplace facilitator, and its two
 * listings registered (again: idempotently) in the marketplace. Loaded only when
 * ANMPAY_DEMO_SELLER=1, so a process without it never loads the x402 seller packages.
 */
import type { ListingRecord } from '../machines/listing/view.ts';
import type { MarketAsset } from '../machines/money/market.ts';
import type { Config } from '../runtime/config.ts';
import type { Db } from '../storage/db.ts';
import { DEMO_ECHO, demoEndpoints, ensureDemoSellerKeys, registerDemoListings, type DemoEndpoint } from '../runtime/market/seller/demo-seller.ts';
import { recordDemoSellerOrigin } from '../runtime/market/seller/demo-origin.ts';
import { startDemoSeller } from '../gateway/demo-seller/server.ts';
import type { MarketEdge } from '../gateway/market/server.ts';
import { listening } from './startup.ts';

export interface DemoSeller {
  /** `http://<host>:<port>`: the origin routed execution may reach on loopback. */
  url: string;
  /** The listings as registered on this start (v2 echo first, then the v1 quote). */
  listings: ListingRecord[];
  /** The endpoints served: the v1 quote only on a chain x402 v1 names. */
  endpoints: readonly DemoEndpoint[];
  close(): Promise<void>;
}

export async function startDemoSellerFor(config: Config, db: Db, marketplace: MarketEdge, log: (msg: string) => void): Promise<DemoSeller> {
  const { market } = marketplace;
  const keys = await ensureDemoSellerKeys(db);
  const lanes = new Set<MarketAsset>(market.anm ? ['USDC', 'ANM'] : ['USDC']);
  const edge = await listening('DEMO_SELLER_PORT', config.HOST, config.DEMO_SELLER_PORT, () =>
    startDemoSeller({
      host: config.HOST,
      port: config.DEMO_SELLER_PORT,
      facilitatorUrl: `${marketplace.url}/facilitator`,
      payTo: { USDC: keys.evm.address, ANM: lanes.has('ANM') ? keys.anm.address : undefined },
      token: market.usdc.token,
    }),
  );
  const endpoints = demoEndpoints(market.usdc.token);
  let listings: ListingRecord[] = [];
  try {
    // Before the listings: a runtime probing them reaches this origin only once it is recorded (ADR 0073).
    await recordDemoSellerOrigin(db, edge.url);
    listings = await registerDemoListings(market.listings, keys, edge.url, lanes, endpoints);
    // Searchable when the start returns, not at the index's next catch-up a second later.
    await market.index.refresh();
  } catch (err) {
    // The demo is a convenience: a listing it cannot register is reported, never a failed start.
    log(`demo seller: could not list its endpoints: ${err instanceof Error ? err.message : String(err)}`);
  }
  log(`demo seller at ${edge.url} (${endpoints.map((e) => `x402 v${e.x402Version} ${e.method} ${e.path}`).join(', ')}); listings ${listings.map((l) => l.resource_id).join(', ') || 'none'}`);
  return { url: edge.url, listings, endpoints, close: () => edge.close() };
}

/** Printed under the demo merchant's banner on the first start. */
export function demoSellerBanner(d: DemoSeller, marketplaceUrl: string): string {
  const line = (e: typeof DEMO_ECHO, lanes: string) => `    ${`x402 v${e.x402Version}`.padEnd(9)}${e.method.padEnd(5)}${`${d.url}${e.path}`.padEnd(44)} ${lanes}`;
  return [
    '',
    '  Demo seller: x402-paid endpoints served and listed by this service',
    line(DEMO_ECHO, d.listings[0]?.accepted_assets.some((a) => a.asset === 'ANM') ? 'USDC or ANM' : 'USDC'),
    ...d.endpoints.filter((e) => e !== DEMO_ECHO).map((e) => line(e, 'USDC')),
    `    listings  ${marketplaceUrl}/api/v1/resources`,
    '',
    '  To buy a call through the marketplace (docs/marketplace.md), in another shell:',
    `    export ANMPAY_MARKET_URL=${marketplaceUrl}`,
    '    BUYER=$(npx anmpay usdc create -q) && npx anmpay usdc fund "$BUYER" 1',
    `    npx anmpay market execute echo --body '{"text":"hello"}' --key ".data/wallets/usdc/$BUYER.json"`,
    '',
  ].join('\n');
}
