/* eslint-disable @typescript-eslint/no-unsafe-argument, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-return --
   assertions read parsed JSON response bodies. */
/**
 * The seller leg carries the seller's own requirements (ADR 0091). DESIGN §5: the seller leg is
 * "a valid ordinary x402 `exact` payment to the seller's own `payTo`"; docs/marketplace.md: "a
 * stock x402 seller verifies and settles it like any `exact` payment". A stock `@x402/express`
 * seller matches a payment's `accepted` against its own requirements field for field
 * (`paymentRequirementsMatchAccepted`), maxTimeoutSeconds and the payTo's spelling included:
 * here it asks 60 s, and the listing spells its payTo in lower case.
 */
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import express, { type RequestHandler } from 'express';
import { x402Client } from '@x402/core/client';
import { HTTPFacilitatorClient } from '@x402/core/server';
import { ExactEvmScheme as ExactEvmServer } from '@x402/evm/exact/server';
import { paymentMiddleware, x402ResourceServer } from '@x402/express';
import { withBazaar } from '@x402/extensions/bazaar';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExactSplitEvmScheme } from '../../runtime/market/client/exact-split-evm.ts';
import { listingFields, seller, signLeg, signListing, type Seller } from '../fixtures/market.ts';
import { waitFor } from '../helpers/backends.ts';
import { FEE_ADDRESSES, useMarket } from './harness.ts';

const h = useMarket({ forward: { allowPrivate: true } });
const buyer = privateKeyToAccount(generatePrivateKey());
const USDC = '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913';
let s: Seller;
let server: Server;
let endpoint: string;
let resourceId: string;
/** The seller's middleware, swapped when it changes its terms. */
let current: RequestHandler;
let rs: x402ResourceServer;

const offering = (maxTimeoutSeconds: number): RequestHandler =>
  paymentMiddleware({ 'GET /w': { accepts: { scheme: 'exact', price: '$0.02', network: 'eip155:8453', payTo: s.evm.address, maxTimeoutSeconds }, description: 'W' } }, rs);

beforeAll(async () => {
  s = seller();
  rs = new x402ResourceServer(new HTTPFacilitatorClient({ url: `${h.url}/facilitator` })).register('eip155:8453', new ExactEvmServer());
  current = offering(60);
  const app = express();
  app.use((req, res, next) => void current(req, res, next));
  app.get('/w', (_req, res) => void res.json({ ok: true }));
  server = app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}/w`;
  await h.market.ledger.fund(buyer.address, 10_000_000n);
  const fields = { ...listingFields(s, { name: 'Wordsmith', description: 'Words', tags: ['lowerpayee'], endpoint, price: '0.02' }), pay_to: { USDC: s.evm.address.toLowerCase() } };
  const listed = await h.req('POST', '/api/v1/resources', { body: await signListing(s, fields) });
  expect(listed.status).toBe(201);
  resourceId = listed.json.resource_id;
}, 60_000);

afterAll(async () => {
  await new Promise((r) => server?.close(r));
});

async function probe() {
  expect((await h.market.scanner.scanNow(resourceId))?.scan.outcome).toBe('ok');
  await h.deps.index.refresh();
}

async function quote() {
  const q = await h.req('POST', '/api/v1/route/quote', { body: { resource_id: resourceId, asset: 'USDC' } });
  expect(q.status).toBe(201);
  return q.json;
}

async function purchase(q: Awaited<ReturnType<typeof quote>>) {
  const paid = await new x402Client().register('eip155:8453', new ExactSplitEvmScheme(buyer)).createPaymentPayload(q.payment_requirements);
  return h.req('POST', '/api/v1/purchase', { headers: { 'idempotency-key': `k-${Math.random()}` }, body: { intent_id: q.intent_id, payment: { legs: paid.payload.legs } } });
}

const status = async (intent: string) => (await h.req('GET', `/api/v1/purchases/${intent}`)).json.status as string;

describe('the seller leg is the seller\'s own x402 payment (DESIGN §5 "Purchase": "a valid ordinary x402 `exact` payment to the seller\'s own `payTo`")', () => {
  it('a probe records the seller\'s offer as it spells it: payTo, token, maxTimeoutSeconds, extra', async () => {
    await probe();
    const record = (await h.req('GET', `/api/v1/resources/${resourceId}`)).json;
    expect(record.accepted_assets[0].pay_to).toBe(s.evm.address.toLowerCase());
    expect(record.accepted_assets[0].seller_offer).toEqual({ pay_to: s.evm.address, asset_id: USDC, max_timeout_seconds: 60, extra: { name: 'USD Coin', version: '2' } });
  });

  it('quote -> purchase -> the stock seller (maxTimeoutSeconds 60, listing payTo in lower case) accepts seller_payment; the purchase settles, the fee after the seller', { timeout: 60_000 }, async () => {
    const q = await quote();
    expect(q.payment_requirements.accepts[0].maxTimeoutSeconds).toBe(60);
    const feeBefore = await h.market.ledger.balanceOf(FEE_ADDRESSES.USDC);
    const bought = await purchase(q);
    expect(bought.status).toBe(200);
    const sp = bought.json.seller_payment;
    const accepted = JSON.parse(Buffer.from(sp.value, 'base64').toString()).accepted;
    expect(accepted).toEqual({ scheme: 'exact', network: 'eip155:8453', asset: USDC, amount: '20000', payTo: s.evm.address, maxTimeoutSeconds: 60, extra: { name: 'USD Coin', version: '2' } });
    const call = await fetch(endpoint, { headers: { [sp.header]: sp.value } });
    expect(call.status).toBe(200);
    await waitFor(async () => (await status(q.intent_id)) === 'SETTLED', 10_000, 'SETTLED');
    expect((await h.market.ledger.balanceOf(FEE_ADDRESSES.USDC)) - feeBefore).toBe(100n);
  });

  it('a seller leg valid longer than the seller\'s maxTimeoutSeconds is not refused: a stock seller\'s facilitator bounds only its lower end (ADR 0091)', async () => {
    const q = await quote();
    const now = Math.floor(Date.now() / 1000);
    const legs = { seller: await signLeg(buyer, { to: s.evm.address, value: 20_000n, validBefore: now + 600 }), fee: await signLeg(buyer, { to: FEE_ADDRESSES.USDC, value: 100n, validBefore: now + 600 }) };
    const r = await h.req('POST', '/api/v1/purchase', { headers: { 'idempotency-key': `k-${Math.random()}` }, body: { intent_id: q.intent_id, payment: { legs } } });
    expect(r.status, r.text).toBe(200);
    expect(await status(q.intent_id)).toBe('VERIFIED');
  });

  it('the Bazaar item is the seller\'s own requirements', async () => {
    const { items } = await withBazaar(new HTTPFacilitatorClient({ url: h.url })).extensions.bazaar.listResources({ limit: 100 });
    const item = items.find((i) => i.resource === endpoint);
    expect(item?.accepts).toEqual([{ scheme: 'exact', network: 'eip155:8453', asset: USDC, amount: '20000', payTo: s.evm.address, maxTimeoutSeconds: 60, extra: { name: 'USD Coin', version: '2' } }]);
  });

  it('a quote pinned before the seller changed its terms: the purchase keeps them, the seller refuses (402) and no fee is taken; after a new probe a new quote is paid', { timeout: 60_000 }, async () => {
    const q = await quote();
    current = offering(120);
    const feeBefore = await h.market.ledger.balanceOf(FEE_ADDRESSES.USDC);
    const bought = await purchase(q);
    expect(bought.status).toBe(200);
    const sp = bought.json.seller_payment;
    expect(JSON.parse(Buffer.from(sp.value, 'base64').toString()).accepted.maxTimeoutSeconds).toBe(60);
    expect((await fetch(endpoint, { headers: { [sp.header]: sp.value } })).status).toBe(402);
    await new Promise((r) => setTimeout(r, 500));
    expect(await status(q.intent_id)).toBe('VERIFIED');
    expect(await h.market.ledger.balanceOf(FEE_ADDRESSES.USDC)).toBe(feeBefore);

    await probe();
    const again = await quote();
    expect(again.payment_requirements.accepts[0].maxTimeoutSeconds).toBe(120);
    const sp2 = (await purchase(again)).json.seller_payment;
    expect((await fetch(endpoint, { headers: { [sp2.header]: sp2.value } })).status).toBe(200);
    await waitFor(async () => (await status(again.intent_id)) === 'SETTLED', 10_000, 'SETTLED');
  });
});
