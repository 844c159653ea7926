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

/** The seller timeout (30 s in production), shortened as execute.test.ts does: only the sloth, which never answers, reaches it. */
const SELLER_TIMEOUT_MS = 10_000;
const h = useMarket({ forward: { allowPrivate: true, timeoutMs: SELLER_TIMEOUT_MS } });
let s: Seller;
let server: Server;
let base: string;
const buyer = privateKeyToAccount(generatePrivateKey());
/** Never funded: the seller's facilitator refuses what it signs. */
const pauper = privateKeyToAccount(generatePrivateKey());
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
  app.use(paymentMiddleware(s.evm.address, { 'GET /quote-of-the-day': route('Quote of the day'), 'GET /broken': route('Broken oracle'), 'GET /sloth': route('Sleepy sloth') }, { url: `${h.url}/facilitator` as `${string}://${string}` }));
  app.get('/quote-of-the-day', (_req, res) => {
    res.type('application/json').send(QUOTE);
  });
  app.get('/broken', (_req, res) => {
    res.status(500).json({ error: 'oracle down' });
  });
  // Past the middleware's verification, the handler never answers.
  app.get('/sloth', () => undefined);
  server = app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  await h.market.ledger.fund(buyer.address, 1_000_000n);
  for (const [name, tag, path] of [['Quote of the day', 'aphorism', '/quote-of-the-day'], ['Broken oracle', 'oracle', '/broken'], ['Sleepy sloth', 'sloth', '/sloth']] as const) {
    const listed = await h.req('POST', '/api/v1/resources', { body: await signedListing(s, { name, tags: [tag], endpoint: `${base}${path}`, price: '0.02' }) });
    expect(listed.status).toBe(201);
  }
}, 60_000);

afterAll(async () => {
  await new Promise((r) => server?.close(r));
});

/** The buyer's X-PAYMENT for the seller's own v1 402, made by the stock client. */
async function sellerHeader(path: string, signer: typeof buyer = buyer): Promise<string> {
  const unpaid = await fetch(`${base}${path}`);
  expect(unpaid.status).toBe(402);
  const required = await unpaid.json();
  expect(required).toMatchObject({ x402Version: 1, accepts: [{ scheme: 'exact', network: 'base', maxAmountRequired: '20000', payTo: s.evm.address }] });
  const client = registerExactEvmScheme(new x402Client(), { signer });
  return encodePaymentSignatureHeader(await client.createPaymentPayload(required));
}

const balances = async () => [await h.market.ledger.balanceOf(FEE_ADDRESSES.USDC), await h.market.ledger.balanceOf(s.evm.address)];

/** A routed execution of a fresh quote for `capability`, the fee leg signed by the funded buyer. */
async function execute(capability: string, header: string, intentId?: string) {
  const id = intentId ?? (await h.req('POST', '/api/v1/route/quote', { body: { capability, asset: 'USDC' } })).json.intent_id;
  const fee = await signLeg(buyer, { to: FEE_ADDRESSES.USDC, value: 100n });
  return { id, r: await h.req('POST', '/api/v1/route/execute', { body: { intent_id: id, fee_payment: { legs: { fee } }, seller_payment: header } }) };
}

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

  it('a v1 seller refusing the payment (its payer unfunded) answers 402: SELLER_FAILED, no fee ("settles the fee leg only when the seller answered below 400")', async () => {
    const header = await sellerHeader('/quote-of-the-day', pauper);
    const before = await balances();
    received.length = 0;
    const { id, r } = await execute('aphorism', header);
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ status: 402, purchase_status: 'SELLER_FAILED' });
    // The stock middleware's own refusal, from its facilitator's verify (ours, in @x402/evm's v1 codes: ADR 0083).
    expect(JSON.parse(r.json.body)).toMatchObject({ x402Version: 1, error: 'invalid_exact_evm_insufficient_balance' });
    expect(received).toEqual([header]);
    await waitFor(async () => (await h.market.purchases.read(id))?.status === 'SELLER_FAILED', 10_000, 'SELLER_FAILED');
    expect(await balances()).toEqual(before);
  });

  it('a v1 seller that never answers past its middleware: 502 seller_unreachable, SELLER_FAILED, no fee and no seller settlement ("timeout 30 s", shortened by option)', async () => {
    const header = await sellerHeader('/sloth');
    const before = await balances();
    received.length = 0;
    const t0 = Date.now();
    const { id, r } = await execute('sloth', header);
    expect(r.status).toBe(502);
    expect(r.json.error.code).toBe('seller_unreachable');
    expect(Date.now() - t0).toBeGreaterThanOrEqual(SELLER_TIMEOUT_MS - 100);
    expect(received).toEqual([header]);
    expect((await h.market.purchases.read(id))?.status).toBe('SELLER_FAILED');
    expect(await balances()).toEqual(before);
  });

  it('a replayed execution: the same intent again is refused 409 and not forwarded; its settled X-PAYMENT under a new quote is refused by the seller (SELLER_FAILED); no fee either time ("One execution per intent")', async () => {
    const header = await sellerHeader('/quote-of-the-day');
    const first = await execute('aphorism', header);
    expect(first.r.json).toMatchObject({ status: 200, body: QUOTE });
    await waitFor(async () => (await h.market.purchases.read(first.id))?.status === 'SETTLED', 10_000, 'SETTLED');
    const before = await balances();
    received.length = 0;
    const again = await execute('aphorism', header, first.id);
    expect(again.r.status).toBe(409);
    expect(again.r.json.error.code).toBe('leg_replayed');
    expect(received).toEqual([]);
    const elsewhere = await execute('aphorism', header);
    expect(elsewhere.r.status).toBe(200);
    expect(elsewhere.r.json).toMatchObject({ status: 402, purchase_status: 'SELLER_FAILED' });
    expect(received).toEqual([header]);
    await waitFor(async () => (await h.market.purchases.read(elsewhere.id))?.status === 'SELLER_FAILED', 10_000, 'SELLER_FAILED');
    expect(await balances()).toEqual(before);
  });
});
