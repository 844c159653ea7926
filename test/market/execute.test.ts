/* eslint-disable @typescript-eslint/no-unsafe-argument, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-return --
   assertions read parsed JSON response bodies. */
/**
 * Routed execution `POST /api/v1/route/execute` against stock `@x402/express` sellers that
 * settle their own leg through the marketplace's facilitator. Each case names the rule of
 * marketplace.md ("What the service does" 5, "Endpoints") or DESIGN §5 "Routed execution" it checks.
 */
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import express from 'express';
import { HTTPFacilitatorClient } from '@x402/core/server';
import { x402Client } from '@x402/core/client';
import { decodePaymentRequiredHeader, encodePaymentSignatureHeader } from '@x402/core/http';
import { ExactEvmScheme as ExactEvmClient } from '@x402/evm';
import { ExactEvmScheme as ExactEvmServer } from '@x402/evm/exact/server';
import { paymentMiddleware, x402ResourceServer } from '@x402/express';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Executions } from '../../runtime/market/executions.ts';
import { MarketRefusal } from '../../runtime/market/errors.ts';
import { seller, signedListing, signLeg, type Seller } from '../fixtures/market.ts';
import { waitFor } from '../helpers/backends.ts';
import { FEE_ADDRESSES, useMarket } from './harness.ts';

/**
 * The seller timeout (30 s in production), shortened: still far above what a served call takes
 * on a loaded machine (the seller verifies and settles through the facilitator inside it), so
 * only the sloth, which never answers, ever reaches it.
 */
const SELLER_TIMEOUT_MS = 10_000;
const h = useMarket({ forward: { allowPrivate: true, timeoutMs: SELLER_TIMEOUT_MS } });
let s: Seller;
let server: Server;
let base: string;
const buyer = privateKeyToAccount(generatePrivateKey());
/** Paid requests each seller route received (a payment header present). */
const hits: Record<string, number> = {};
const seen: Record<string, string | undefined> = {};
const client = new x402Client().register('eip155:8453', new ExactEvmClient(buyer));
const PRICE = '$0.02';

beforeAll(async () => {
  s = seller();
  const rs = new x402ResourceServer(new HTTPFacilitatorClient({ url: `${h.url}/facilitator` })).register('eip155:8453', new ExactEvmServer());
  const accepts = { scheme: 'exact', price: PRICE, network: 'eip155:8453', payTo: s.evm.address } as const;
  const app = express();
  app.use(express.json());
  app.use((req, _res, next) => {
    const header = req.headers['payment-signature'] as string | undefined;
    if (header) {
      hits[req.path] = (hits[req.path] ?? 0) + 1;
      seen[req.path] = header;
    }
    next();
  });
  app.use(paymentMiddleware({ 'POST /echo': { accepts, description: 'Echo' }, 'GET /broken': { accepts, description: 'Broken' } }, rs));
  app.post('/echo', (req, res) => {
    res.type('application/json').send(`{"echo":${JSON.stringify(req.body)},"note":"é ✓"}`);
  });
  app.get('/broken', (_req, res) => {
    res.status(500).json({ error: 'oracle down' });
  });
  app.get('/bounce', (_req, res) => res.redirect(302, '/target'));
  app.get('/target', (req, res) => {
    hits['/target'] = (hits['/target'] ?? 0) + 1;
    res.json({ followed: true, got: req.headers['payment-signature'] ?? null });
  });
  app.get('/sleepy', () => undefined);
  server = app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  await h.market.ledger.fund(buyer.address, 10_000_000n);
  const list = async (name: string, tags: string[], path: string, method: string) => {
    const r = await h.req('POST', '/api/v1/resources', { body: await signedListing(s, { name, tags, description: name, endpoint: `${base}${path}`, method, price: '0.02' }) });
    expect(r.status).toBe(201);
  };
  await list('Echo parrot', ['parrot'], '/echo', 'POST');
  await list('Broken oracle', ['oracle'], '/broken', 'GET');
  await list('Bouncing kangaroo', ['kangaroo'], '/bounce', 'GET');
  await list('Sleepy sloth', ['sloth'], '/sleepy', 'GET');
  // A seller whose name will not resolve (RFC 6761 reserves .invalid; the test's lookup fails it too).
  const lemur = await h.req('POST', '/api/v1/resources', { body: await signedListing(s, { name: 'Lost lemur', tags: ['lemur'], description: 'Lost lemur', endpoint: 'http://lost-lemur.invalid/x', method: 'POST', price: '0.02' }) });
  expect(lemur.status).toBe(201);
}, 60_000);

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server?.close(r));
});

async function quote(capability: string) {
  const q = await h.req('POST', '/api/v1/route/quote', { body: { capability, asset: 'USDC' } });
  expect(q.status).toBe(201);
  return q.json;
}

/** The seller header as a buyer builds it: from the seller's own 402, with the stock @x402/evm client. */
async function sellerHeader(path: string, method: string): Promise<string> {
  const r = await fetch(`${base}${path}`, { method, ...(method === 'POST' ? { headers: { 'content-type': 'application/json' }, body: '{}' } : {}) });
  expect(r.status).toBe(402);
  const required = decodePaymentRequiredHeader(r.headers.get('payment-required')!);
  return encodePaymentSignatureHeader(await client.createPaymentPayload(required));
}

const feeLeg = (value = 100n) => signLeg(buyer, { to: FEE_ADDRESSES.USDC, value });
const feeBalance = () => h.market.ledger.balanceOf(FEE_ADDRESSES.USDC);
const status = async (id: string) => (await h.req('GET', `/api/v1/purchases/${id}`)).json.status;
/** The answer is recorded, and the fee taken, right after it is returned (ADR 0046). */
const settlesAs = (id: string, want: string) => waitFor(async () => (await status(id)) === want, 10_000, `${id} ${want}`);

describe('POST /api/v1/route/execute (DESIGN §5 "Routed execution")', () => {
  it('seller 200: its body passes through byte for byte, the header is forwarded verbatim, then SETTLED with the fee (marketplace.md rule 5)', async () => {
    const q = await quote('parrot');
    const header = await sellerHeader('/echo', 'POST');
    const [fee0, seller0] = [await feeBalance(), await h.market.ledger.balanceOf(s.evm.address)];
    const r = await h.req('POST', '/api/v1/route/execute', { body: { intent_id: q.intent_id, fee_payment: { legs: { fee: await feeLeg() } }, seller_payment: header, body: { say: 'hi' } } });
    expect(r.status).toBe(200);
    expect(r.json.status).toBe(200);
    expect(r.json.body).toBe('{"echo":{"say":"hi"},"note":"é ✓"}');
    expect(r.json.body_encoding).toBe('utf8');
    expect(r.json.headers['content-type']).toMatch(/^application\/json/);
    expect(r.json.headers['payment-response']).toBeTruthy();
    expect(seen['/echo']).toBe(header);
    // Answered before the answer is recorded and the fee taken: both follow at once.
    expect(r.json.purchase_status).toBe('EXECUTING');
    await settlesAs(q.intent_id, 'SETTLED');
    expect((await feeBalance()) - fee0).toBe(100n);
    // The seller was paid by the buyer's own leg, settled by the seller through the facilitator.
    expect((await h.market.ledger.balanceOf(s.evm.address)) - seller0).toBe(20_000n);
  });

  it('a second execution of the same intent is refused 409 leg_replayed and nothing is forwarded ("One execution per intent")', async () => {
    const q = await quote('parrot');
    const body = { intent_id: q.intent_id, fee_payment: { legs: { fee: await feeLeg() } }, seller_payment: await sellerHeader('/echo', 'POST'), body: {} };
    expect((await h.req('POST', '/api/v1/route/execute', { body })).status).toBe(200);
    const before = hits['/echo'];
    const again = await h.req('POST', '/api/v1/route/execute', { body: { ...body, fee_payment: { legs: { fee: await feeLeg() } } } });
    expect(again.status).toBe(409);
    expect(again.json.error.code).toBe('leg_replayed');
    expect((await h.req('POST', '/api/v1/route/execute', { body })).status).toBe(409);
    expect(hits['/echo']).toBe(before);
    await settlesAs(q.intent_id, 'SETTLED');
  });

  it('two executions of one intent at once: one is forwarded and answered, the other refused 409 and its call, made ready while recording, never sent (ADR 0062)', async () => {
    const q = await quote('parrot');
    const header = await sellerHeader('/echo', 'POST');
    const before = hits['/echo'] ?? 0;
    const run = async () => h.req('POST', '/api/v1/route/execute', { body: { intent_id: q.intent_id, fee_payment: { legs: { fee: await feeLeg() } }, seller_payment: header, body: {} } });
    const answers = await Promise.all([run(), run()]);
    expect(answers.map((a) => a.status).sort()).toEqual([200, 409]);
    await settlesAs(q.intent_id, 'SETTLED');
    await new Promise((r) => setTimeout(r, 50));
    expect(hits['/echo']).toBe(before + 1);
  });

  it('a quote this process kept but PostgreSQL lost (its commit did not wait for the flush, ADR 0064): 404 not_found, nothing bound, nothing forwarded', async () => {
    const q = await quote('parrot');
    expect(h.host.seen(q.intent_id)).toBeTruthy();
    // What a crash of PostgreSQL within the WAL writer's delay leaves: no trace of the quote.
    await h.backend.db.tx(async (t) => {
      for (const table of ['timers', 'actor_events', 'actors']) await t.query(`DELETE FROM ${table} WHERE ${table === 'actors' ? 'id' : 'actor_id'} = $1`, [q.intent_id]);
    });
    const before = hits['/echo'] ?? 0;
    const fee0 = await feeBalance();
    const r = await h.req('POST', '/api/v1/route/execute', { body: { intent_id: q.intent_id, fee_payment: { legs: { fee: await feeLeg() } }, seller_payment: await sellerHeader('/echo', 'POST'), body: {} } });
    expect(r.status).toBe(404);
    expect(r.json.error.code).toBe('not_found');
    expect((await h.backend.db.query(`SELECT 1 FROM market_leg_nonces WHERE intent_id = $1`, [q.intent_id])).rowCount).toBe(0);
    await new Promise((res) => setTimeout(res, 50));
    expect(hits['/echo'] ?? 0).toBe(before);
    expect(await feeBalance()).toBe(fee0);
  });

  it('seller 500: SELLER_FAILED and the fee is never taken ("settles the fee leg only when the seller answered below 400")', async () => {
    const q = await quote('oracle');
    const fee0 = await feeBalance();
    const r = await h.req('POST', '/api/v1/route/execute', { body: { intent_id: q.intent_id, fee_payment: { legs: { fee: await feeLeg() } }, seller_payment: await sellerHeader('/broken', 'GET') } });
    expect(r.status).toBe(200);
    expect(r.json.status).toBe(500);
    expect(JSON.parse(r.json.body)).toEqual({ error: 'oracle down' });
    expect(r.json.purchase_status).toBe('SELLER_FAILED');
    await settlesAs(q.intent_id, 'SELLER_FAILED');
    expect(await feeBalance()).toBe(fee0);
  });

  it('a seller that refuses the payment (402): SELLER_FAILED, no fee (issue 21 "refusing the payment leaves the fee unsettled")', async () => {
    const q = await quote('parrot');
    const fee0 = await feeBalance();
    // The quoted leg, from a payer without the balance: the marketplace leaves the ledger to the
    // seller's facilitator (ADR 0087), which refuses it.
    const unfunded = Buffer.from(JSON.stringify(await signLeg(privateKeyToAccount(generatePrivateKey()), { to: s.evm.address, value: 20_000n }))).toString('base64');
    const r = await h.req('POST', '/api/v1/route/execute', { body: { intent_id: q.intent_id, fee_payment: { legs: { fee: await feeLeg() } }, seller_payment: unfunded, body: {} } });
    expect(r.status).toBe(200);
    expect(r.json.status).toBe(402);
    expect(r.json.purchase_status).toBe('SELLER_FAILED');
    await settlesAs(q.intent_id, 'SELLER_FAILED');
    expect(await feeBalance()).toBe(fee0);
  });

  it('a redirect is not followed: the 3xx is the seller answer, its target is never called ("no redirects followed")', async () => {
    const q = await quote('kangaroo');
    const header = (await signLeg(buyer, { to: s.evm.address, value: 20_000n })) as unknown;
    const r = await h.req('POST', '/api/v1/route/execute', { body: { intent_id: q.intent_id, fee_payment: { legs: { fee: await feeLeg() } }, seller_payment: Buffer.from(JSON.stringify(header)).toString('base64') } });
    expect(r.status).toBe(200);
    expect(r.json.status).toBe(302);
    expect(r.json.headers.location).toBe('/target');
    expect(hits['/target']).toBeUndefined();
    // A 3xx is an answer below 400: the fee is taken.
    await settlesAs(q.intent_id, 'SETTLED');
  });

  it('a seller that does not answer in time: 502 seller_unreachable, SELLER_FAILED, no fee ("timeout 30 s", shortened by option)', async () => {
    const q = await quote('sloth');
    const fee0 = await feeBalance();
    const header = Buffer.from(JSON.stringify(await signLeg(buyer, { to: s.evm.address, value: 20_000n }))).toString('base64');
    const fee = await feeLeg();
    const t0 = Date.now();
    const r = await h.req('POST', '/api/v1/route/execute', { body: { intent_id: q.intent_id, fee_payment: { legs: { fee } }, seller_payment: header } });
    expect(r.status).toBe(502);
    expect(r.json.error.code).toBe('seller_unreachable');
    // The seller got the paid call and never answered: the marketplace waited the whole timeout, no less.
    expect(Date.now() - t0).toBeGreaterThanOrEqual(SELLER_TIMEOUT_MS - 100);
    expect(hits['/sleepy']).toBe(1);
    expect(await status(q.intent_id)).toBe('SELLER_FAILED');
    expect(await feeBalance()).toBe(fee0);
  });

  it('a fee leg that does not match the quote is refused 402 invalid_payment and nothing is forwarded ("verifies the fee leg against the quote")', async () => {
    const q = await quote('parrot');
    const before = hits['/echo'];
    const header = await sellerHeader('/echo', 'POST');
    const r = await h.req('POST', '/api/v1/route/execute', { body: { intent_id: q.intent_id, fee_payment: { legs: { fee: await feeLeg(99n) } }, seller_payment: header, body: {} } });
    expect(r.status).toBe(402);
    expect(r.json.error.code).toBe('invalid_payment');
    const missing = await h.req('POST', '/api/v1/route/execute', { body: { intent_id: q.intent_id, fee_payment: { legs: {} }, seller_payment: header, body: {} } });
    expect(missing.status).toBe(402);
    expect(missing.json.error.code).toBe('fee_leg_missing');
    expect(hits['/echo']).toBe(before);
    expect(await status(q.intent_id)).toBe('QUOTED');
  });

  it('marketplace.md:12 "A proof missing its fee leg does not verify", DESIGN §5 "fee_leg_missing 402": no fee_payment at all, or one without legs, is 402 fee_leg_missing; nothing forwarded, recorded or settled', async () => {
    const q = await quote('parrot');
    const before = hits['/echo'];
    const fee0 = await feeBalance();
    const header = await sellerHeader('/echo', 'POST');
    for (const fee_payment of [undefined, {}]) {
      const r = await h.req('POST', '/api/v1/route/execute', { body: { intent_id: q.intent_id, ...(fee_payment && { fee_payment }), seller_payment: header, body: {} } });
      expect({ fee_payment, status: r.status, code: r.json.error?.code }).toEqual({ fee_payment, status: 402, code: 'fee_leg_missing' });
    }
    expect(hits['/echo']).toBe(before);
    expect(await status(q.intent_id)).toBe('QUOTED');
    expect(await feeBalance()).toBe(fee0);
    // Nothing held either: the same intent and seller header then execute once the fee leg is there.
    const r = await h.req('POST', '/api/v1/route/execute', { body: { intent_id: q.intent_id, fee_payment: { legs: { fee: await feeLeg() } }, seller_payment: header, body: {} } });
    expect([r.status, r.json.status]).toEqual([200, 200]);
    await settlesAs(q.intent_id, 'SETTLED');
  });

  it('a fee_payment of the wrong type stays 400 invalid_body (not a missing leg)', async () => {
    const q = await quote('parrot');
    // docs/errors.md invalid_body, "a field outside its schema": a fee_payment or legs naming another field too.
    for (const fee_payment of [null, 'x', [], { legs: 'x' }, { legs: null }, { legs: {}, foo: 1 }, { legs: { fee: 'x', tip: 'x' } }, { intent_id: 'pi_0000000000000000000000ff', legs: {} }]) {
      const r = await h.req('POST', '/api/v1/route/execute', { body: { intent_id: q.intent_id, fee_payment, seller_payment: 'x' } });
      expect({ fee_payment, status: r.status, code: r.json.error?.code }).toEqual({ fee_payment, status: 400, code: 'invalid_body' });
    }
    for (const body of [[], 'x', null]) expect((await h.req('POST', '/api/v1/route/execute', { body: JSON.stringify(body) })).json.error.code).toBe('invalid_body');
    expect(await status(q.intent_id)).toBe('QUOTED');
  });

  it('a loopback seller is refused without the development switch, before anything is recorded or sent ("SSRF rules as for webhooks")', async () => {
    const q = await quote('parrot');
    const before = hits['/echo'];
    const strict = new Executions({ db: h.backend.db, host: h.host, purchases: h.market.purchases, listings: h.market.listings, usdc: h.market.usdc, forward: { allowPrivate: false } });
    const run = strict.execute({ intentId: q.intent_id, fee: await feeLeg(), sellerPayment: await sellerHeader('/echo', 'POST'), body: {} });
    await expect(run).rejects.toBeInstanceOf(MarketRefusal);
    await expect(run).rejects.toMatchObject({ code: 'seller_unreachable' });
    expect(hits['/echo']).toBe(before);
    expect(await status(q.intent_id)).toBe('QUOTED');
  });

  it('a seller whose name does not resolve: 502 seller_unreachable before anything is recorded, as the scanner scores it unreachable', async () => {
    const q = await quote('lemur');
    const nxdomain = () => Promise.reject(Object.assign(new Error('getaddrinfo ENOTFOUND lost-lemur.invalid'), { code: 'ENOTFOUND' }));
    const strict = new Executions({ db: h.backend.db, host: h.host, purchases: h.market.purchases, listings: h.market.listings, usdc: h.market.usdc, forward: { allowPrivate: false, lookupAll: nxdomain } });
    const run = strict.execute({ intentId: q.intent_id, fee: await feeLeg(), sellerPayment: await sellerHeader('/echo', 'POST'), body: {} });
    await expect(run).rejects.toMatchObject({ code: 'seller_unreachable', message: 'cannot resolve lost-lemur.invalid' });
    expect(await status(q.intent_id)).toBe('QUOTED');
  });
});
