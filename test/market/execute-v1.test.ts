/* eslint-disable @typescript-eslint/no-unsafe-argument, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-member-access --
   assertions read parsed JSON response bodies. */
/**
 * Routed execution against an x402 v1 seller (DESIGN §5 "Routed execution": `X-PAYMENT` for
 * v1): the seller answers 402 with the v1 JSON body, verifies and settles `X-PAYMENT` through
 * the marketplace's facilitator with the stock `HTTPFacilitatorClient`, and answers with
 * `X-PAYMENT-RESPONSE`. The buyer's header is made by the stock `@x402/evm` v1 client scheme.
 */
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import express from 'express';
import { x402Client } from '@x402/core/client';
import { encodePaymentSignatureHeader } from '@x402/core/http';
import { HTTPFacilitatorClient } from '@x402/core/server';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { registerExactEvmScheme } from '@x402/evm/exact/client';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { USDC_TOKEN } from '../../machines/money/market.ts';
import { seller, signedListing, signLeg, type Seller } from '../fixtures/market.ts';
import { FEE_ADDRESSES, useMarket } from './harness.ts';

const h = useMarket({ forward: { allowPrivate: true } });
let s: Seller;
let server: Server;
let endpoint: string;
const buyer = privateKeyToAccount(generatePrivateKey());
const received: string[] = [];

const requirements = () => ({
  scheme: 'exact',
  network: 'base',
  maxAmountRequired: '20000',
  resource: endpoint,
  description: 'Quote of the day',
  mimeType: 'application/json',
  payTo: s.evm.address,
  maxTimeoutSeconds: 300,
  asset: USDC_TOKEN.address,
  extra: { name: USDC_TOKEN.name, version: USDC_TOKEN.version },
});

beforeAll(async () => {
  s = seller();
  const facilitator = new HTTPFacilitatorClient({ url: `${h.url}/facilitator` });
  const app = express();
  app.get('/quote-of-the-day', async (req, res) => {
    const header = req.headers['x-payment'];
    if (typeof header !== 'string') return void res.status(402).json({ x402Version: 1, error: 'X-PAYMENT header is required', accepts: [requirements()] });
    received.push(header);
    const payload = JSON.parse(Buffer.from(header, 'base64').toString('utf8')) as PaymentPayload;
    const reqs = requirements() as unknown as PaymentRequirements;
    const v = await facilitator.verify(payload, reqs);
    if (!v.isValid) return void res.status(402).json({ x402Version: 1, error: v.invalidReason, accepts: [requirements()] });
    const settled = await facilitator.settle(payload, reqs);
    res.setHeader('X-PAYMENT-RESPONSE', Buffer.from(JSON.stringify(settled)).toString('base64'));
    res.json({ quote: 'Simplicity is prerequisite for reliability.' });
  });
  server = app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}/quote-of-the-day`;
  await h.market.ledger.fund(buyer.address, 1_000_000n);
  const listed = await h.req('POST', '/api/v1/resources', { body: await signedListing(s, { name: 'Quote of the day', tags: ['aphorism'], endpoint, price: '0.02' }) });
  expect(listed.status).toBe(201);
}, 60_000);

afterAll(async () => {
  await new Promise((r) => server?.close(r));
});

describe('routed execution to an x402 v1 seller', () => {
  it('forwards the v1 payment byte-identical under X-PAYMENT; the seller settles its leg, then the fee ("X-PAYMENT for v1")', async () => {
    const q = await h.req('POST', '/api/v1/route/quote', { body: { capability: 'aphorism', asset: 'USDC' } });
    expect(q.status).toBe(201);
    const unpaid = await fetch(endpoint);
    expect(unpaid.status).toBe(402);
    const client = registerExactEvmScheme(new x402Client(), { signer: buyer });
    const header = encodePaymentSignatureHeader(await client.createPaymentPayload(await unpaid.json()));
    const [fee0, seller0] = [await h.market.ledger.balanceOf(FEE_ADDRESSES.USDC), await h.market.ledger.balanceOf(s.evm.address)];
    const fee = await signLeg(buyer, { to: FEE_ADDRESSES.USDC, value: 100n });
    const r = await h.req('POST', '/api/v1/route/execute', { body: { intent_id: q.json.intent_id, fee_payment: { legs: { fee } }, seller_payment: header } });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ status: 200, purchase_status: 'SETTLED', body: '{"quote":"Simplicity is prerequisite for reliability."}' });
    expect(r.json.headers['x-payment-response']).toBeTruthy();
    expect(received).toEqual([header]);
    expect((await h.market.ledger.balanceOf(s.evm.address)) - seller0).toBe(20_000n);
    expect((await h.market.ledger.balanceOf(FEE_ADDRESSES.USDC)) - fee0).toBe(100n);
  });
});
