/* eslint-disable @typescript-eslint/no-unsafe-argument, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-member-access --
   assertions read parsed JSON response bodies. */
/**
 * Interop with the real x402 packages, unchanged (DESIGN §5 "Facilitator", "Purchase"): a
 * stock `@x402/express` seller verifies and settles through the marketplace's facilitator;
 * a buyer pays it with `@x402/fetch` + `@x402/evm`'s ExactEvmScheme; and a marketplace
 * purchase's `seller_payment` is accepted by that same seller, after which the fee settles.
 */
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import express from 'express';
import { HTTPFacilitatorClient } from '@x402/core/server';
import { ExactEvmScheme as ExactEvmClient } from '@x402/evm';
import { ExactEvmScheme as ExactEvmServer } from '@x402/evm/exact/server';
import { paymentMiddleware, x402ResourceServer } from '@x402/express';
import { wrapFetchWithPaymentFromConfig } from '@x402/fetch';
import { x402Client } from '@x402/core/client';
import { ExactSplitEvmScheme } from '../../runtime/market/client/exact-split-evm.ts';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seller, signedListing, signLeg, type Seller } from '../fixtures/market.ts';
import { FEE_ADDRESSES, useMarket } from './harness.ts';

const h = useMarket();
let s: Seller;
let sellerServer: Server;
let sellerUrl: string;
const buyer = privateKeyToAccount(generatePrivateKey());

beforeAll(async () => {
  s = seller();
  const resourceServer = new x402ResourceServer(new HTTPFacilitatorClient({ url: `${h.url}/facilitator` })).register('eip155:8453', new ExactEvmServer());
  const app = express();
  app.use(paymentMiddleware({ 'GET /weather': { accepts: { scheme: 'exact', price: '$0.02', network: 'eip155:8453', payTo: s.evm.address }, description: 'Weather' } }, resourceServer));
  app.get('/weather', (_req, res) => {
    res.json({ forecast: 'sunny' });
  });
  sellerServer = app.listen(0, '127.0.0.1');
  await new Promise((r) => sellerServer.once('listening', r));
  sellerUrl = `http://127.0.0.1:${(sellerServer.address() as AddressInfo).port}`;
  await h.market.ledger.fund(buyer.address, 1_000_000n);
  const listed = await h.req('POST', '/api/v1/resources', { body: await signedListing(s, { name: 'Weather forecast', endpoint: `${sellerUrl}/weather`, price: '0.02' }) });
  expect(listed.status).toBe(201);
}, 60_000);

afterAll(async () => {
  await new Promise((r) => sellerServer?.close(r));
});

describe('x402 interop (real packages, no mocks)', () => {
  it('/facilitator/supported names exact on eip155:8453 in the SDK shape', async () => {
    const r = await h.req('GET', '/facilitator/supported');
    const extra = { asset: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913', name: 'USD Coin', version: '2', chainId: 8453 };
    expect(r.json.kinds).toContainEqual({ x402Version: 2, scheme: 'exact', network: 'eip155:8453', extra });
    expect(r.json.kinds).toContainEqual({ x402Version: 1, scheme: 'exact', network: 'base', extra });
  });

  it('@x402/fetch pays a stock @x402/express seller that settles through our facilitator', async () => {
    const before = await h.market.ledger.balanceOf(s.evm.address);
    const pay = wrapFetchWithPaymentFromConfig(fetch, { schemes: [{ network: 'eip155:8453', client: new ExactEvmClient(buyer) }] });
    const res = await pay(`${sellerUrl}/weather`, { method: 'GET' });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ forecast: 'sunny' });
    expect(res.headers.get('payment-response')).toBeTruthy();
    expect((await h.market.ledger.balanceOf(s.evm.address)) - before).toBe(20_000n);
  });

  it("a marketplace purchase's seller_payment is accepted by the stock seller; then the fee settles", async () => {
    const q = await h.req('POST', '/api/v1/route/quote', { body: { capability: 'weather', asset: 'USDC' } });
    expect(q.status).toBe(201);
    const legs = {
      seller: await signLeg(buyer, { to: s.evm.address, value: 20_000n }),
      fee: await signLeg(buyer, { to: FEE_ADDRESSES.USDC, value: 100n }),
    };
    const bought = await h.req('POST', '/api/v1/purchase', { headers: { 'idempotency-key': 'interop-1' }, body: { intent_id: q.json.intent_id, payment: { legs } } });
    expect(bought.status).toBe(200);
    const feeBefore = await h.market.ledger.balanceOf(FEE_ADDRESSES.USDC);
    const call = await fetch(`${sellerUrl}/weather`, { headers: { [bought.json.seller_payment.header]: bought.json.seller_payment.value } });
    expect(call.status).toBe(200);
    expect(await call.json()).toEqual({ forecast: 'sunny' });
    const after = await h.req('GET', `/api/v1/purchases/${q.json.intent_id}`);
    expect(after.json.status).toBe('SETTLED');
    expect((await h.market.ledger.balanceOf(FEE_ADDRESSES.USDC)) - feeBefore).toBe(100n);
  });

  it("ExactSplitEvmScheme registered in @x402/core's x402Client signs both legs of a quote; the purchase verifies", async () => {
    const q = await h.req('POST', '/api/v1/route/quote', { body: { capability: 'weather', asset: 'USDC' } });
    const client = new x402Client().register('eip155:8453', new ExactSplitEvmScheme(buyer));
    const paid = await client.createPaymentPayload(q.json.payment_requirements);
    expect(paid.accepted.scheme).toBe('exact-split');
    const bought = await h.req('POST', '/api/v1/purchase', { headers: { 'idempotency-key': 'split-1' }, body: { intent_id: q.json.intent_id, payment: { legs: paid.payload.legs } } });
    expect(bought.status).toBe(200);
    expect(bought.json.status).toBe('VERIFIED');
  });

  it('the stock seller refuses a replayed payment: the facilitator reports the nonce used', async () => {
    const legs = { seller: await signLeg(buyer, { to: s.evm.address, value: 20_000n }) };
    const header = Buffer.from(JSON.stringify(legs.seller)).toString('base64');
    expect((await fetch(`${sellerUrl}/weather`, { headers: { 'PAYMENT-SIGNATURE': header } })).status).toBe(200);
    expect((await fetch(`${sellerUrl}/weather`, { headers: { 'PAYMENT-SIGNATURE': header } })).status).toBe(402);
  });
});
