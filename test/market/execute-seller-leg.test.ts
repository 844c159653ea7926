/* eslint-disable @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-return --
   assertions read parsed JSON response bodies. */
/**
 * Routed execution checks the seller leg it forwards against the quote (ADR 0087):
 * marketplace.md:24 "A price that is the `max_price` ceiling in a search or quote is the TOTAL
 * the buyer pays", so a seller payment for more (or less, or to someone else) than the quote's
 * seller leg is refused before anything is recorded or sent. Sellers: the stock v2 middleware
 * (`@x402/express`) and the stock v1 one (`x402-express`), both settling through the
 * marketplace's facilitator; the mismatching payments are made by the stock clients
 * (`@x402/evm`, v1 through `registerExactEvmScheme`) from the sellers' own 402s, altered.
 */
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import express from 'express';
import { HTTPFacilitatorClient } from '@x402/core/server';
import { x402Client } from '@x402/core/client';
import { decodePaymentRequiredHeader, encodePaymentSignatureHeader } from '@x402/core/http';
import type { PaymentRequired } from '@x402/core/types';
import { registerExactEvmScheme } from '@x402/evm/exact/client';
import { ExactEvmScheme as ExactEvmServer } from '@x402/evm/exact/server';
import { paymentMiddleware, x402ResourceServer } from '@x402/express';
import { paymentMiddleware as v1Middleware } from 'x402-express';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seller, signedListing, signLeg, toBase64, type Seller } from '../fixtures/market.ts';
import { waitFor } from '../helpers/backends.ts';
import { FEE_ADDRESSES, useMarket } from './harness.ts';

const h = useMarket({ forward: { allowPrivate: true } });
let s: Seller;
let server: Server;
let base: string;
const buyer = privateKeyToAccount(generatePrivateKey());
const stranger = privateKeyToAccount(generatePrivateKey());
const client = registerExactEvmScheme(new x402Client(), { signer: buyer });
/** Requests that reached each seller route carrying a payment header. */
const paidCalls: Record<string, number> = {};
const PRICE = 20_000n;

beforeAll(async () => {
  s = seller();
  const rs = new x402ResourceServer(new HTTPFacilitatorClient({ url: `${h.url}/facilitator` })).register('eip155:8453', new ExactEvmServer());
  const app = express();
  app.use(express.json());
  app.use((req, _res, next) => {
    if (req.headers['payment-signature'] || req.headers['x-payment']) paidCalls[req.path] = (paidCalls[req.path] ?? 0) + 1;
    next();
  });
  app.use(paymentMiddleware({ 'POST /v2/echo': { accepts: { scheme: 'exact', price: '$0.02', network: 'eip155:8453', payTo: s.evm.address }, description: 'Echo' } }, rs));
  app.use(v1Middleware(s.evm.address, { 'GET /v1/quote': { price: '$0.02', network: 'base', config: { description: 'v1 quote', mimeType: 'application/json', maxTimeoutSeconds: 300 } } }, { url: `${h.url}/facilitator` as `${string}://${string}` }));
  app.post('/v2/echo', (req, res) => res.json({ echo: req.body }));
  app.get('/v1/quote', (_req, res) => res.json({ quote: 'ok' }));
  server = app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  await h.market.ledger.fund(buyer.address, 10_000_000n);
  for (const [name, tag, path, method] of [['Echo parrot', 'parrot', '/v2/echo', 'POST'], ['Quote of the day', 'aphorism', '/v1/quote', 'GET']] as const) {
    const listed = await h.req('POST', '/api/v1/resources', { body: await signedListing(s, { name, tags: [tag], description: name, endpoint: `${base}${path}`, method, price: '0.02' }) });
    expect(listed.status).toBe(201);
  }
}, 60_000);

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server?.close(r));
});

interface Route {
  tag: string;
  path: string;
  method: 'GET' | 'POST';
}
const V2: Route = { tag: 'parrot', path: '/v2/echo', method: 'POST' };
const V1: Route = { tag: 'aphorism', path: '/v1/quote', method: 'GET' };

/** The seller's own 402 requirements (v2 header or v1 body), as the stock client reads them. */
async function required(r: Route): Promise<PaymentRequired> {
  const res = await fetch(`${base}${r.path}`, { method: r.method, ...(r.method === 'POST' ? { headers: { 'content-type': 'application/json' }, body: '{}' } : {}) });
  expect(res.status).toBe(402);
  const v2 = res.headers.get('payment-required');
  return v2 ? decodePaymentRequiredHeader(v2) : ((await res.json()) as PaymentRequired);
}

/** The stock client's payment for the seller's 402 with its one offer altered. */
async function paidWith(r: Route, alter: (offer: Record<string, unknown>) => Record<string, unknown> = (o) => o): Promise<string> {
  const req = await required(r);
  const accepts = req.accepts.map((o) => alter({ ...o }));
  return encodePaymentSignatureHeader(await client.createPaymentPayload({ ...req, accepts } as PaymentRequired));
}

const amountKey = (o: Record<string, unknown>) => ('maxAmountRequired' in o ? 'maxAmountRequired' : 'amount');
const withAmount = (delta: bigint) => (o: Record<string, unknown>) => ({ ...o, [amountKey(o)]: (PRICE + delta).toString() });

async function quote(r: Route) {
  const q = await h.req('POST', '/api/v1/route/quote', { body: { capability: r.tag, asset: 'USDC' } });
  expect(q.status).toBe(201);
  return q.json as { intent_id: string; payment_requirements: { accepts: Array<{ extra: { legs: { seller: { payTo: string; amount: string } } } }> } };
}

const execute = (intent: string, fee: unknown, sellerPayment: string) => h.req('POST', '/api/v1/route/execute', { body: { intent_id: intent, fee_payment: { legs: { fee } }, seller_payment: sellerPayment, body: {} } });
const feeBalance = () => h.market.ledger.balanceOf(FEE_ADDRESSES.USDC);
const status = async (id: string) => (await h.req('GET', `/api/v1/purchases/${id}`)).json.status;
const now = () => Math.floor(Date.now() / 1000);

type Case = [name: string, reason: string, route: Route, make: (r: Route) => Promise<string>];
const cases: Case[] = [
  ['v2, authorization.value = seller amount + 1', 'invalid_exact_evm_payload_authorization_value_mismatch', V2, (r) => paidWith(r, withAmount(1n))],
  ['v2, authorization.value = seller amount − 1', 'invalid_exact_evm_payload_authorization_value_mismatch', V2, (r) => paidWith(r, withAmount(-1n))],
  ['v2, 45× the seller amount (the reported 0.9 USDC for a 0.02 listing)', 'invalid_exact_evm_payload_authorization_value_mismatch', V2, (r) => paidWith(r, withAmount(PRICE * 44n))],
  ['v2, payTo another address', 'invalid_exact_evm_recipient_mismatch', V2, (r) => paidWith(r, (o) => ({ ...o, payTo: stranger.address }))],
  ['v2, network eip155:84532 (Base Sepolia)', 'invalid_exact_evm_network_mismatch', V2, async () => toBase64(await signLeg(buyer, { to: s.evm.address, value: PRICE, network: 'eip155:84532' }))],
  ['v2, signed over Base Sepolia\'s chain id', 'invalid_exact_evm_signature', V2, async () => toBase64(await signLeg(buyer, { to: s.evm.address, value: PRICE, domain: { chainId: 84532 } }))],
  ['v2, expired (validBefore passed)', 'invalid_exact_evm_payload_authorization_valid_before', V2, async () => toBase64(await signLeg(buyer, { to: s.evm.address, value: PRICE, validAfter: now() - 600, validBefore: now() - 10 }))],
  ['v2, not valid yet (validAfter ahead)', 'invalid_exact_evm_payload_authorization_valid_after', V2, async () => toBase64(await signLeg(buyer, { to: s.evm.address, value: PRICE, validAfter: now() + 120 }))],
  ['v2, scheme exact-anm', 'invalid_exact_evm_scheme', V2, async () => toBase64(await signLeg(buyer, { to: s.evm.address, value: PRICE, scheme: 'exact-anm' }))],
  ['v2, an x402 payment that is no EIP-3009 authorization', 'invalid_payload', V2, async () => toBase64({ ...(await signLeg(buyer, { to: s.evm.address, value: PRICE })), payload: { transaction: '00' } })],
  ['v2, an x402 payment without its accepted requirements', 'invalid_payload', V2, async () => toBase64({ x402Version: 2, payload: (await signLeg(buyer, { to: s.evm.address, value: PRICE })).payload })],
  ['v1 (X-PAYMENT), maxAmountRequired + 1', 'invalid_exact_evm_payload_authorization_value_mismatch', V1, (r) => paidWith(r, withAmount(1n))],
  ['v1 (X-PAYMENT), payTo another address', 'invalid_exact_evm_recipient_mismatch', V1, (r) => paidWith(r, (o) => ({ ...o, payTo: stranger.address }))],
];

describe('routed execution checks the forwarded seller leg against the quote (ADR 0087)', () => {
  it.each(cases)(
    'marketplace.md:24 "the max_price ceiling … is the TOTAL the buyer pays"; :95 seller_payment forwarded verbatim: %s → 402 invalid_payment (%s), seller not called, nothing recorded, fee untouched; the intent then executes with the quoted leg',
    async (_name, reason, route, make) => {
      const q = await quote(route);
      expect(q.payment_requirements.accepts[0]!.extra.legs.seller).toEqual({ payTo: s.evm.address, amount: PRICE.toString() });
      const fee = await signLeg(buyer, { to: FEE_ADDRESSES.USDC, value: 100n });
      const [calls0, fee0] = [paidCalls[route.path] ?? 0, await feeBalance()];
      const r = await execute(q.intent_id, fee, await make(route));
      expect([r.status, r.json.error?.code]).toEqual([402, 'invalid_payment']);
      expect(r.json.error.message).toContain(reason);
      expect(r.json.error.message).toMatch(/^seller leg: /);
      await new Promise((res) => setTimeout(res, 50));
      expect(paidCalls[route.path] ?? 0).toBe(calls0);
      expect(await status(q.intent_id)).toBe('QUOTED');
      expect((await h.backend.db.query(`SELECT 1 FROM market_leg_nonces WHERE intent_id = $1`, [q.intent_id])).rowCount).toBe(0);
      expect(await feeBalance()).toBe(fee0);
      // Nothing held: the same intent and fee leg execute with the seller leg the quote names.
      const ok = await execute(q.intent_id, fee, await paidWith(route));
      expect([ok.status, ok.json.status]).toEqual([200, 200]);
      expect(paidCalls[route.path]).toBe(calls0 + 1);
      await waitFor(async () => (await status(q.intent_id)) === 'SETTLED', 10_000, `${q.intent_id} SETTLED`);
      expect((await feeBalance()) - fee0).toBe(100n);
    },
  );
});
