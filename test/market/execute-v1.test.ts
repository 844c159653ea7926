/* eslint-disable @typescript-eslint/no-unsafe-argument, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-member-access --
   assertions read parsed JSON response bodies. */
/**
 * Routed execution against an x402 v1 seller (DESIGN §5 "Routed execution": `X-PAYMENT` for
 * v1). The seller is the stock v1 middleware, `x402-express` 1.x's `paymentMiddleware`, with
 * the marketplace's facilitator as its `facilitator.url`: it answers 402 with the v1 JSON
 * body, verifies and settles `X-PAYMENT` itself, and answers with `X-PAYMENT-RESPONSE`. The
 * buyer's header is made by the stock `@x402/evm` client from that 402.
 */
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import express from 'express';
import { paymentMiddleware } from 'x402-express';
import { x402Client } from '@x402/core/client';
import { encodePaymentSignatureHeader } from '@x402/core/http';
import { registerExactEvmScheme } from '@x402/evm/exact/client';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seller, signedListing, signLeg, type Seller } from '../fixtures/market.ts';
import { waitFor } from '../helpers/backends.ts';
import { FEE_ADDRESSES, useMarket } from './harness.ts';

const h = useMarket({ forward: { allowPrivate: true } });
let s: Seller;
let server: Server;
let base: string;
const buyer = privateKeyToAccount(generatePrivateKey());
/** Every X-PAYMENT header the seller received, in order. */
const received: string[] = [];
const QUOTE = '{"quote":"Simplicity is prerequisite for reliability."}';

beforeAll(async () => {
  s = seller();
  const app = express();
  app.use((req, _res, next) => {
    const header = req.headers['x-payment'];
    if (typeof header === 'string') received.push(header);
    next();
  });
  const route = (description: string) => ({ price: '$0.02', network: 'base' as const, config: { description, mimeType: 'application/json', maxTimeoutSeconds: 300 } });
  app.use(paymentMiddleware(s.evm.address, { 'GET /quote-of-the-day': route('Quote of the day'), 'GET /broken': route('Broken oracle') }, { url: `${h.url}/facilitator` as `${string}://${string}` }));
  app.get('/quote-of-the-day', (_req, res) => {
    res.type('application/json').send(QUOTE);
  });
  app.get('/broken', (_req, res) => {
    res.status(500).json({ error: 'oracle down' });
  });
  server = app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  await h.market.ledger.fund(buyer.address, 1_000_000n);
  for (const [name, tag, path] of [['Quote of the day', 'aphorism', '/quote-of-the-day'], ['Broken oracle', 'oracle', '/broken']] as const) {
    const listed = await h.req('POST', '/api/v1/resources', { body: await signedListing(s, { name, tags: [tag], endpoint: `${base}${path}`, price: '0.02' }) });
    expect(listed.status).toBe(201);
  }
}, 60_000);

afterAll(async () => {
  await new Promise((r) => server?.close(r));
});

/** The buyer's X-PAYMENT for the seller's own v1 402, made by the stock client. */
async function sellerHeader(path: string): Promise<string> {
  const unpaid = await fetch(`${base}${path}`);
  expect(unpaid.status).toBe(402);
  const required = await unpaid.json();
  expect(required).toMatchObject({ x402Version: 1, accepts: [{ scheme: 'exact', network: 'base', maxAmountRequired: '20000', payTo: s.evm.address }] });
  const client = registerExactEvmScheme(new x402Client(), { signer: buyer });
  return encodePaymentSignatureHeader(await client.createPaymentPayload(required));
}

const balances = async () => [await h.market.ledger.balanceOf(FEE_ADDRESSES.USDC), await h.market.ledger.balanceOf(s.evm.address)];

describe('routed execution to a stock x402 v1 seller (x402-express)', () => {
  it('forwards the v1 payment byte-identical under X-PAYMENT; the seller settles its leg, then the fee ("X-PAYMENT for v1")', async () => {
    const q = await h.req('POST', '/api/v1/route/quote', { body: { capability: 'aphorism', asset: 'USDC' } });
    expect(q.status).toBe(201);
    const header = await sellerHeader('/quote-of-the-day');
    const [fee0, seller0] = await balances();
    const fee = await signLeg(buyer, { to: FEE_ADDRESSES.USDC, value: 100n });
    received.length = 0;
    const r = await h.req('POST', '/api/v1/route/execute', { body: { intent_id: q.json.intent_id, fee_payment: { legs: { fee } }, seller_payment: header } });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ status: 200, purchase_status: 'EXECUTING', body: QUOTE, body_encoding: 'utf8' });
    // The seller's own settlement receipt, from the facilitator it settled through.
    const receipt = JSON.parse(Buffer.from(r.json.headers['x-payment-response'], 'base64').toString('utf8'));
    expect(receipt).toMatchObject({ success: true, network: 'base', payer: buyer.address.toLowerCase() });
    expect(received).toEqual([header]);
    // The fee is taken right after the answer is returned (ADR 0046).
    await waitFor(async () => (await h.market.purchases.read(q.json.intent_id))?.status === 'SETTLED', 10_000, 'SETTLED');
    const [fee1, seller1] = await balances();
    expect([fee1! - fee0!, seller1! - seller0!]).toEqual([100n, 20_000n]);
  });

  it('a v1 seller answering 500 settles nothing: SELLER_FAILED, neither leg taken ("settles the fee leg only when the seller answered below 400")', async () => {
    const q = await h.req('POST', '/api/v1/route/quote', { body: { capability: 'oracle', asset: 'USDC' } });
    expect(q.status).toBe(201);
    const header = await sellerHeader('/broken');
    const before = await balances();
    received.length = 0;
    const r = await h.req('POST', '/api/v1/route/execute', { body: { intent_id: q.json.intent_id, fee_payment: { legs: { fee: await signLeg(buyer, { to: FEE_ADDRESSES.USDC, value: 100n }) } }, seller_payment: header } });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ status: 500, purchase_status: 'SELLER_FAILED', body: '{"error":"oracle down"}' });
    expect(received).toEqual([header]);
    await waitFor(async () => (await h.market.purchases.read(q.json.intent_id))?.status === 'SELLER_FAILED', 10_000, 'SELLER_FAILED');
    expect(await balances()).toEqual(before);
  });
});
