/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-argument, @typescript-eslint/no-unsafe-assignment -- assertions read parsed JSON response bodies. */
/**
 * The USDC lane on another network and token than the defaults (README "Configuration",
 * docs/marketplace.md "Configuration", ADR 0035): a marketplace process started with
 * `USDC_LANE=rpc`, `USDC_NETWORK=eip155:84532` and a token of its own names that network and
 * that token everywhere a buyer, a seller or a crawler reads them: `/.well-known/x402-marketplace`,
 * `/facilitator/supported` and `/discovery/resources` read by the stock `@x402/core` and
 * `@x402/extensions` clients, listings' pricing, quotes. Legs are signed under the chain id
 * 84532 EIP-712 domain; a leg signed for Base's chain id is refused.
 */
import { x402Client } from '@x402/core/client';
import { HTTPFacilitatorClient } from '@x402/core/http';
import { withBazaar } from '@x402/extensions/bazaar';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServices, type Services } from '../../bin/services.ts';
import { ConfigError, loadConfig } from '../../runtime/config.ts';
import { ExactSplitEvmScheme } from '../../runtime/market/client/exact-split-evm.ts';
import { configuredUsdcToken } from '../../runtime/market/lanes/usdc-ledger.ts';
import { dropSchema, realAvailable, uniqueName } from '../helpers/backends.ts';
import { marketplaceRoleEnv } from '../helpers/service-config.ts';
import { seller, signedListing, signLeg, type Seller } from '../fixtures/market.ts';
import { useEvmLane } from './evm-lane.ts';

const SEPOLIA = 84532;
const lane = useEvmLane({ chainId: SEPOLIA });
const schema = uniqueName('usdcnet');
let services: Services | undefined;
let url = '';
let s: Seller;
const buyer = privateKeyToAccount(generatePrivateKey());

const env = () => ({
  ...marketplaceRoleEnv(schema),
  USDC_LANE: 'rpc',
  USDC_NETWORK: `eip155:${SEPOLIA}`,
  BASE_RPC_URL: lane.node.url,
  USDC_RELAYER_KEY: lane.relayerKey,
  USDC_TOKEN_ADDRESS: lane.token.address,
  USDC_TOKEN_NAME: lane.token.name,
  USDC_TOKEN_VERSION: lane.token.version,
});

const json = async (r: Response): Promise<Record<string, any>> => (await r.json()) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
const quote = async () => {
  const r = await post('/api/v1/route/quote', { capability: 'ledger', asset: 'USDC' });
  expect(r.status).toBe(201);
  return json(r);
};

describe('USDC_NETWORK (runtime/config.ts)', () => {
  it('is read as the chain id of a CAIP-2 eip155 network; unset means Base (eip155:8453)', () => {
    expect(configuredUsdcToken(loadConfig({})).chainId).toBe(8453);
    expect(configuredUsdcToken(loadConfig({ USDC_NETWORK: 'eip155:84532' }))).toMatchObject({ chainId: 84532, name: 'USD Coin', version: '2' });
    for (const bad of ['84532', 'eip155:', 'eip155:0', 'native:1', 'eip155:8453x', 'base-sepolia']) {
      expect(() => loadConfig({ USDC_NETWORK: bad }), bad).toThrow(ConfigError);
    }
  });
});

describe.runIf(realAvailable)('a marketplace process on eip155:84532 with its own token (USDC_LANE=rpc)', () => {
  beforeAll(async () => {
    s = seller();
    await lane.deployed.mint(buyer.address, 1_000_000n);
  });
  afterAll(async () => {
    await services?.stop();
    await dropSchema(schema);
  });

  it('refuses to start when BASE_RPC_URL serves another chain than USDC_NETWORK names', async () => {
    await expect(startServices(loadConfig({ ...env(), USDC_NETWORK: 'eip155:8453' }))).rejects.toThrow(/serves chain 84532, but the USDC lane is on chain 8453/);
  });

  it('/.well-known/x402-marketplace names the network and the token (address, EIP-712 name and version, chain id)', async () => {
    services = await startServices(loadConfig(env()));
    url = services.marketplace?.url ?? '';
    expect((await post('/api/v1/resources', await signedListing(s, { name: 'Ledger lookups', tags: ['ledger'], price: '0.02' }))).status).toBe(201);
    const doc = await json(await fetch(`${url}/.well-known/x402-marketplace`));
    expect(doc.lanes[0]).toEqual({
      asset: 'USDC', network: 'eip155:84532', scheme: 'exact-split', leg_scheme: 'exact', fee_address: expect.any(String),
      token: { address: lane.token.address, name: 'Local USD Coin', version: '2', chain_id: SEPOLIA, decimals: 6 },
    });
    expect(doc.lanes[1]).toMatchObject({ asset: 'ANM', network: 'native:1' });
  });

  it("@x402/core's HTTPFacilitatorClient reads /facilitator/supported: exact on eip155:84532 (v1: base-sepolia) with the token, nothing on eip155:8453", async () => {
    const supported = await new HTTPFacilitatorClient({ url: `${url}/facilitator` }).getSupported();
    const extra = { asset: lane.token.address, name: 'Local USD Coin', version: '2', chainId: SEPOLIA };
    expect(supported.kinds).toContainEqual({ x402Version: 2, scheme: 'exact', network: 'eip155:84532', extra });
    expect(supported.kinds).toContainEqual({ x402Version: 1, scheme: 'exact', network: 'base-sepolia', extra });
    expect(supported.kinds.map((k) => String(k.network)).filter((n) => n === 'eip155:8453' || n === 'base')).toEqual([]);
  });

  it("@x402/extensions' Bazaar client lists the seller's requirements in the configured token on eip155:84532; records and quotes name it", async () => {
    const page = await withBazaar(new HTTPFacilitatorClient({ url })).extensions.bazaar.listResources({ type: 'http', network: 'eip155:84532' });
    expect(page.items).toHaveLength(1);
    expect(page.items[0]!.accepts).toEqual([
      { scheme: 'exact', network: 'eip155:84532', asset: lane.token.address, amount: '20000', payTo: s.evm.address, maxTimeoutSeconds: 300, extra: { name: 'Local USD Coin', version: '2' } },
    ]);
    const listed = await json(await fetch(`${url}/api/v1/search?capability=ledger`));
    expect(listed.data[0].pricing.network).toBe('eip155:84532');
    expect(listed.data[0].accepted_assets[0].network).toBe('eip155:84532');
    const q = await quote();
    expect(q.price.network).toBe('eip155:84532');
    expect(q.payment_requirements.accepts[0]).toMatchObject({ scheme: 'exact-split', network: 'eip155:84532', asset: lane.token.address, extra: { name: 'Local USD Coin', version: '2' } });
    expect((await json(await fetch(`${url}/api/v1/purchases/${q.intent_id}`))).price.network).toBe('eip155:84532');
  });

  it("legs signed by ExactSplitEvmScheme registered for eip155:84532 verify; a leg under Base's chain id does not", async () => {
    const q = await quote();
    // A token other than the network's default USDC is one the buyer opts into (the SDK's spend controls).
    const client = x402Client.fromConfig({
      schemes: [{ network: 'eip155:84532', client: new ExactSplitEvmScheme(buyer) }],
      spendControls: { allowedAssets: [{ network: 'eip155:84532', asset: lane.token.address, maxAmountPerPayment: '50000' }] },
    });
    const paid = await client.createPaymentPayload(q.payment_requirements);
    const bought = await post('/api/v1/purchase', { intent_id: q.intent_id, payment: { legs: paid.payload.legs } }, { 'idempotency-key': 'net-1' });
    expect(bought.status).toBe(200);
    const body = await json(bought);
    expect(body.status).toBe('VERIFIED');
    // The seller leg handed back is an ordinary exact payment on eip155:84532, and x402 v1 names that chain base-sepolia.
    expect(JSON.parse(Buffer.from(body.seller_payment.value, 'base64').toString()).accepted.network).toBe('eip155:84532');
    expect(JSON.parse(Buffer.from(body.seller_payment.v1.value, 'base64').toString()).network).toBe('base-sepolia');

    const other = await quote();
    const legs = other.payment_requirements.accepts[0].extra.legs;
    const base = { ...lane.token, chainId: 8453 };
    const wrong = { seller: await signLeg(buyer, { to: legs.seller.payTo, value: legs.seller.amount, token: base }), fee: await signLeg(buyer, { to: legs.fee.payTo, value: legs.fee.amount, token: base }) };
    const refused = await post('/api/v1/purchase', { intent_id: other.intent_id, payment: { legs: wrong } }, { 'idempotency-key': 'net-2' });
    expect(refused.status).toBe(402);
    expect((await json(refused)).error.code).toBe('invalid_payment');
  });
});
