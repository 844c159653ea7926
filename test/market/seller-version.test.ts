/* eslint-disable @typescript-eslint/no-unsafe-argument, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-member-access --
   assertions read parsed JSON response bodies. */
/**
 * The seller's x402 version, as the scanner read it from the seller's own 402, decides what a
 * buyer is handed (ADR 0080). DESIGN §5 "Purchase": `seller_payment` is "the seller leg as a
 * ready header value, with the header name for the seller's x402 version"; DESIGN §5
 * "Discovery": the Bazaar list is read "unchanged" by `@x402/extensions`' client, so a v1
 * seller's item is a v1 item. Sellers: the stock v1 middleware (`x402-express` 1.x, over the
 * `x402` package) and the stock v2 one (`@x402/express`), both settling through the
 * marketplace's facilitator.
 */
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import express from 'express';
import { HTTPFacilitatorClient } from '@x402/core/server';
import { ExactEvmScheme as ExactEvmServer } from '@x402/evm/exact/server';
import { paymentMiddleware as v2Middleware, x402ResourceServer } from '@x402/express';
import { withBazaar } from '@x402/extensions/bazaar';
import { paymentMiddleware as v1Middleware } from 'x402-express';
import { createPaymentHeader } from 'x402/client';
import { createSigner, type PaymentRequirements as V1Requirements } from 'x402/types';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seller, signedListing, signLeg, type Seller } from '../fixtures/market.ts';
import { waitFor } from '../helpers/backends.ts';
import { FEE_ADDRESSES, useMarket } from './harness.ts';

const h = useMarket({ forward: { allowPrivate: true } });
let s: Seller;
let server: Server;
let base: string;
const buyerKey = generatePrivateKey();
const buyer = privateKeyToAccount(buyerKey);
const ids: Record<string, string> = {};
const ANSWER = '{"quote":"Simplicity is prerequisite for reliability."}';

beforeAll(async () => {
  s = seller();
  const app = express();
  app.use(v1Middleware(s.evm.address, { 'GET /v1/quote': { price: '$0.02', network: 'base', config: { description: 'v1 quote', mimeType: 'application/json', maxTimeoutSeconds: 300 } } }, { url: `${h.url}/facilitator` as `${string}://${string}` }));
  const rs = new x402ResourceServer(new HTTPFacilitatorClient({ url: `${h.url}/facilitator` })).register('eip155:8453', new ExactEvmServer());
  app.use(v2Middleware({ 'GET /v2/quote': { accepts: { scheme: 'exact', price: '$0.02', network: 'eip155:8453', payTo: s.evm.address }, description: 'v2 quote' } }, rs));
  app.get(['/v1/quote', '/v2/quote'], (_req, res) => {
    res.type('application/json').send(ANSWER);
  });
  server = app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  await h.market.ledger.fund(buyer.address, 1_000_000n);
  for (const [key, tag, path] of [['v1', 'oldspeaker', '/v1/quote'], ['v2', 'newspeaker', '/v2/quote'], ['fresh', 'unprobedspeaker', '/v2/fresh']] as const) {
    const listed = await h.req('POST', '/api/v1/resources', { body: await signedListing(s, { name: `Aphorisms ${key}`, description: `Aphorisms ${key}`, tags: [tag], endpoint: `${base}${path}`, price: '0.02' }) });
    expect(listed.status).toBe(201);
    ids[key] = listed.json.resource_id;
  }
  // The scanner reads each seller's 402; the fresh listing is never probed.
  for (const key of ['v1', 'v2']) expect((await h.market.scanner.scanNow(ids[key]!))?.scan.outcome).toBe('ok');
  await h.deps.index.refresh();
}, 60_000);

afterAll(async () => {
  await new Promise((r) => server?.close(r));
});

async function buy(capability: string) {
  const q = await h.req('POST', '/api/v1/route/quote', { body: { capability, asset: 'USDC' } });
  expect(q.status).toBe(201);
  // Signed for the sellers' own 300 s, as the SDK's clients sign.
  const validBefore = Math.floor(Date.now() / 1000) + 300;
  const legs = { seller: await signLeg(buyer, { to: s.evm.address, value: 20_000n, validBefore }), fee: await signLeg(buyer, { to: FEE_ADDRESSES.USDC, value: 100n, validBefore }) };
  const bought = await h.req('POST', '/api/v1/purchase', { headers: { 'idempotency-key': `k-${capability}-${Math.random()}` }, body: { intent_id: q.json.intent_id, payment: { legs } } });
  expect(bought.status).toBe(200);
  return { intent: q.json.intent_id as string, sp: bought.json.seller_payment };
}

describe('seller_payment names the header of the seller\'s x402 version (DESIGN §5 "Purchase")', () => {
  it('the listing record shows the version its seller\'s 402 was read in; null before any', async () => {
    const read = async (key: string): Promise<unknown> => (await h.req('GET', `/api/v1/resources/${ids[key]}`)).json.x402_version;
    expect([await read('v1'), await read('v2'), await read('fresh')]).toEqual([1, 2, null]);
  });

  it.each([
    ['v1', 'oldspeaker', '/v1/quote', 'X-PAYMENT', 1],
    ['v2', 'newspeaker', '/v2/quote', 'PAYMENT-SIGNATURE', 2],
  ] as const)('a %s seller: sent as-is under its `header`, the stock seller accepts it; then the fee settles', { timeout: 60_000 }, async (_v, capability, path, header, version) => {
    const { intent, sp } = await buy(capability);
    expect([sp.header, sp.x402_version]).toEqual([header, version]);
    // Both versions stay available: `v1` (as before) and `v2`; `value` is the chosen one's.
    expect(sp.v2.header).toBe('PAYMENT-SIGNATURE');
    expect(sp.v1.header).toBe('X-PAYMENT');
    expect(sp.value).toBe(version === 1 ? sp.v1.value : sp.v2.value);
    const call = await fetch(`${base}${path}`, { headers: { [sp.header]: sp.value } });
    expect(call.status).toBe(200);
    expect(await call.text()).toBe(ANSWER);
    await waitFor(async () => (await h.market.purchases.read(intent))?.status === 'SETTLED', 10_000, 'SETTLED');
  });

  it('a listing not yet probed is taken for v2: PAYMENT-SIGNATURE', async () => {
    const { sp } = await buy('unprobedspeaker');
    expect([sp.header, sp.x402_version, sp.value]).toEqual(['PAYMENT-SIGNATURE', 2, sp.v2.value]);
  });
});

describe('Bazaar items in the seller\'s x402 version (DESIGN §5 "Discovery")', () => {
  it('a v1 seller is a v1 item (network by name, maxAmountRequired, resource); v2 and unprobed sellers v2 items; lastUpdated is the last update', async () => {
    const client = withBazaar(new HTTPFacilitatorClient({ url: h.url }));
    const items = (await client.extensions.bazaar.listResources({ type: 'http', limit: 100 })).items;
    const item = (path: string) => items.find((i) => i.resource === `${base}${path}`);
    expect(item('/v1/quote')).toMatchObject({ x402Version: 1 });
    expect(item('/v1/quote')?.accepts).toEqual([
      { scheme: 'exact', network: 'base', maxAmountRequired: '20000', resource: `${base}/v1/quote`, description: 'Aphorisms v1', mimeType: 'application/json', payTo: s.evm.address, maxTimeoutSeconds: 300, asset: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913', extra: { name: 'USD Coin', version: '2' } },
    ]);
    expect(item('/v2/quote')).toMatchObject({ x402Version: 2, accepts: [expect.objectContaining({ network: 'eip155:8453', amount: '20000' })] });
    expect(item('/v2/fresh')).toMatchObject({ x402Version: 2 });
    // A filter by the CAIP-2 id finds the v1 item too.
    const byId = await client.extensions.bazaar.listResources({ network: 'eip155:8453', limit: 100 });
    expect(byId.items.map((i) => i.resource)).toContain(`${base}/v1/quote`);
    // And the v1 name finds the v2 items on that chain.
    const byName = await client.extensions.bazaar.listResources({ network: 'base', limit: 100 });
    expect(byName.items.map((i) => i.resource)).toEqual(expect.arrayContaining([`${base}/v1/quote`, `${base}/v2/quote`]));
  });

  it("the v1 item, paid by the stock v1 client (the `x402` package's createPaymentHeader, X-PAYMENT), is accepted by the v1 seller", { timeout: 60_000 }, async () => {
    const { items } = await withBazaar(new HTTPFacilitatorClient({ url: h.url })).extensions.bazaar.listResources({ limit: 100 });
    const item = items.find((i) => i.resource === `${base}/v1/quote`)!;
    const xPayment = await createPaymentHeader(await createSigner('base', buyerKey), item.x402Version, item.accepts[0] as unknown as V1Requirements);
    const call = await fetch(`${base}/v1/quote`, { headers: { 'X-PAYMENT': xPayment } });
    expect(call.status).toBe(200);
  });

  it('lastUpdated is the listing\'s last update, not its creation', async () => {
    h.skew += 5_000;
    try {
      const again = await h.req('POST', '/api/v1/resources', { body: await signedListing(s, { name: 'Aphorisms v2', description: 'Aphorisms v2, updated', tags: ['newspeaker'], endpoint: `${base}/v2/quote`, price: '0.02' }) });
      expect(again.status).toBe(200);
      await h.deps.index.refresh();
      const record = (await h.req('GET', `/api/v1/resources/${ids.v2}`)).json;
      expect(record.updated_at).toBeGreaterThan(record.created_at);
      const { items } = await withBazaar(new HTTPFacilitatorClient({ url: h.url })).extensions.bazaar.listResources({ limit: 100 });
      const item = items.find((i) => i.resource === `${base}/v2/quote`)!;
      expect(item.lastUpdated).toBe(new Date(record.updated_at * 1000).toISOString());
      expect(item.lastUpdated).not.toBe(new Date(record.created_at * 1000).toISOString());
    } finally {
      h.skew = 0;
    }
  });
});
