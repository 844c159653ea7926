/**
 * The project's own demo seller (DESIGN §6): two x402-paid endpoints the service serves
 * itself and lists in its marketplace on every start, so discovery, quote, purchase and
 * routed execution work out of the box. Its keys are generated on the first start and kept
 * in `settings` (like the treasury keys), so every later start, and every process over the
 * same database, signs the listings with the same keys: re-registering then changes nothing.
 */
import { randomBytes } from 'node:crypto';
import { hexToBytes } from '@noble/hashes/utils.js';
import { privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { formatAtomic, type MarketAsset } from '../../../machines/money/market.ts';
import type { ListingRecord } from '../../../machines/listing/view.ts';
import type { Db } from '../../../storage/db.ts';
import { walletFromSeed, type Wallet } from '../../chain/codec/keys.ts';
import { signListing } from '../client/listing-signer.ts';
import type { UsdcToken } from '../lanes/usdc-ledger.ts';
import type { Listings } from '../listings.ts';
import { v1NetworkName } from '../requirements.ts';

const SETTINGS_KEY = 'market.demo_seller';

export interface DemoSellerKeys {
  /** Signs for and is paid on the USDC lane. */
  evm: PrivateKeyAccount;
  /** Signs for and is paid on the ANM lane (`native:1`, the live chain). */
  anm: Wallet;
}

/** One demo endpoint: where it is served, how it is listed, what it costs (atomic units). */
export interface DemoEndpoint {
  path: string;
  method: 'GET' | 'POST';
  x402Version: 1 | 2;
  name: string;
  description: string;
  tags: string[];
  prices: { USDC: bigint; ANM?: bigint };
  example_request: Record<string, unknown> | null;
  example_response: Record<string, unknown>;
}

/** The v2 endpoint answers with what it was sent; priced on both lanes. */
export const DEMO_ECHO: DemoEndpoint = {
  path: '/echo',
  method: 'POST',
  x402Version: 2,
  name: 'Paid echo (demo seller, x402 v2)',
  description: 'Answers with the JSON body it was sent. Served by this ANM Pay service to show a paid call end to end.',
  tags: ['echo', 'demo', 'x402-v2'],
  prices: { USDC: 10_000n, ANM: 10_000_000n },
  example_request: { text: 'hello' },
  example_response: { echo: { text: 'hello' } },
};

/** The v1 endpoint: the quote of the (UTC) day, USDC only (x402 v1 has no ANM network). */
export const DEMO_QUOTE: DemoEndpoint = {
  path: '/v1/quote-of-the-day',
  method: 'GET',
  x402Version: 1,
  name: 'Quote of the day (demo seller, x402 v1)',
  description: 'One aphorism per UTC day. Served by this ANM Pay service with the x402 v1 protocol.',
  tags: ['quote', 'aphorism', 'demo', 'x402-v1'],
  prices: { USDC: 20_000n },
  example_request: null,
  example_response: { quote: 'Simplicity is prerequisite for reliability.', author: 'Edsger W. Dijkstra', day: '2026-01-01' },
};

export const DEMO_ENDPOINTS: readonly DemoEndpoint[] = [DEMO_ECHO, DEMO_QUOTE];

/** The endpoints served on the USDC lane's chain: the v1 one only where x402 v1 has a name for that chain. */
export function demoEndpoints(token: UsdcToken): readonly DemoEndpoint[] {
  return v1NetworkName(token) === undefined ? [DEMO_ECHO] : DEMO_ENDPOINTS;
}

/** The demo seller's keys: generated once and kept in `settings`; the first process to write wins. */
export async function ensureDemoSellerKeys(db: Db): Promise<DemoSellerKeys> {
  const read = async () => (await db.query<{ value: { evm_private_key: string; anm_seed: string } }>(`SELECT value FROM settings WHERE key = $1`, [SETTINGS_KEY])).rows[0]?.value;
  let value = await read();
  if (!value) {
    const fresh = { evm_private_key: `0x${randomBytes(32).toString('hex')}`, anm_seed: randomBytes(32).toString('hex') };
    await db.query(`INSERT INTO settings (key, value) VALUES ($1, $2::jsonb) ON CONFLICT (key) DO NOTHING`, [SETTINGS_KEY, JSON.stringify(fresh)]);
    value = (await read())!;
  }
  const seed = hexToBytes(value.anm_seed);
  try {
    return { evm: privateKeyToAccount(value.evm_private_key as `0x${string}`), anm: walletFromSeed(seed, 'live') };
  } finally {
    seed.fill(0);
  }
}

/** The listing body of one endpoint at `baseUrl`, signed by the demo seller's keys. */
export async function demoListingBody(keys: DemoSellerKeys, baseUrl: string, e: DemoEndpoint, lanes: ReadonlySet<MarketAsset>): Promise<Record<string, unknown>> {
  const anm = e.prices.ANM !== undefined && lanes.has('ANM') ? e.prices.ANM : undefined;
  const fields = {
    name: e.name,
    description: e.description,
    category: 'demo',
    tags: e.tags,
    endpoint: `${baseUrl}${e.path}`,
    method: e.method,
    pricing: { model: 'per_call', asset: 'USDC', seller_price: formatAtomic('USDC', e.prices.USDC) },
    accepted_assets: anm === undefined ? [] : [{ asset: 'ANM', seller_price: formatAtomic('ANM', anm) }],
    pay_to: { USDC: keys.evm.address, ...(anm === undefined ? {} : { ANM: keys.anm.address }) },
    request_schema: e.method === 'POST' ? { type: 'object', description: 'any JSON object' } : null,
    example_request: e.example_request,
    example_response: e.example_response,
  };
  return signListing(fields, { evm: keys.evm, anm: keys.anm });
}

/**
 * Lists every demo endpoint served at `baseUrl`. A listing's id is a hash of its endpoint and
 * method and the signed body is the same on every start, so a restart adds nothing.
 */
export async function registerDemoListings(listings: Listings, keys: DemoSellerKeys, baseUrl: string, lanes: ReadonlySet<MarketAsset>, endpoints: readonly DemoEndpoint[] = DEMO_ENDPOINTS): Promise<ListingRecord[]> {
  const out: ListingRecord[] = [];
  for (const e of endpoints) out.push((await listings.register(await demoListingBody(keys, baseUrl, e, lanes))).record);
  return out;
}
