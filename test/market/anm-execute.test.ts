/* eslint-disable @typescript-eslint/no-unsafe-argument, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-return --
   assertions read parsed JSON response bodies. */
/**
 * Routed execution on the ANM lane (issue 21 item 1; DESIGN §5 "Routed execution"; ADR 0024,
 * 0038) against a stock `@x402/express` seller with the project's ExactAnmServerScheme, which
 * verifies and settles its own `exact-anm` payment through the marketplace's facilitator on a
 * devnet. The fee is the buyer's transfer with the next nonce; the marketplace submits it only
 * after a served answer AND once the seller transfer is settled (DEPTH blocks here, 12 in
 * production); it is never taken twice, nor for a failed call.
 */
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import express from 'express';
import { HTTPFacilitatorClient, x402ResourceServer } from '@x402/core/server';
import { x402Client } from '@x402/core/client';
import { decodePaymentRequiredHeader, encodePaymentSignatureHeader } from '@x402/core/http';
import { paymentMiddleware } from '@x402/express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeSignedTx, txHash } from '../../machines/chain/index.ts';
import type { PurchaseEvent } from '../../machines/purchase/events.ts';
import { ExactAnmScheme } from '../../runtime/market/client/exact-anm.ts';
import type { AnmWallet } from '../../runtime/market/client/anm-wallet.ts';
import { ExactAnmServerScheme } from '../../runtime/market/server/exact-anm.ts';
import type { Wallet } from '../../runtime/chain/codec/keys.ts';
import { waitFor } from '../helpers/backends.ts';
import { seller, signedListing, type Seller } from '../fixtures/market.ts';
import { ANM, anmBuyer, anmLeg } from '../fixtures/market-anm.ts';
import { FEE_ADDRESSES, useMarket } from './harness.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- parsed JSON bodies
type Json = any;
const DEPTH = 2;
const h = useMarket({ anm: { confirmations: DEPTH }, forward: { allowPrivate: true, timeoutMs: 3_000 } });
const SELLER_PRICE = 250_000_000n; // 0.25 ANM
const FEE = 1_250_000n; // ceil(0.5 % of it)
let s: Seller;
let server: Server;
let base: string;
let buyer: { keys: Wallet; wallet: AnmWallet };
const hits: Record<string, number> = {};
const seen: Record<string, string | undefined> = {};

beforeAll(async () => {
  s = seller();
  const rs = new x402ResourceServer(new HTTPFacilitatorClient({ url: `${h.url}/facilitator` })).register('native:1', new ExactAnmServerScheme());
  const accepts = { scheme: 'exact-anm', price: '0.25 ANM', network: 'native:1', payTo: s.anmAddress } as const;
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
  app.get('/free', (_req, res) => res.json({ free: true }));
  app.use(
    paymentMiddleware(
      {
        'POST /echo': { accepts, description: 'Echo' },
        'GET /broken': { accepts, description: 'Broken' },
        'GET /picky': { accepts: { ...accepts, extra: { reference: 'ticket:7' } }, description: 'Picky' },
      },
      rs,
    ),
  );
  app.post('/echo', (req, res) => res.type('application/json').send(`{"echo":${JSON.stringify(req.body)},"note":"é ✓"}`));
  app.get('/broken', (_req, res) => res.status(500).json({ error: 'oracle down' }));
  app.get('/picky', (_req, res) => res.json({ picky: true }));
  app.get('/sleepy', () => undefined);
  server = app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  buyer = await anmBuyer(h.chain.rpc, 10n * ANM);
  const list = async (name: string, tags: string[], path: string, method: string) => {
    const r = await h.req('POST', '/api/v1/resources', { body: await signedListing(s, { name, tags, description: name, endpoint: `${base}${path}`, method, asset: 'ANM', price: '0.25' }) });
    expect(r.status).toBe(201);
  };
  await list('Echo parrot', ['parrot'], '/echo', 'POST');
  await list('Broken oracle', ['oracle'], '/broken', 'GET');
  await list('Picky heron', ['heron'], '/picky', 'GET');
  await list('Sleepy sloth', ['sloth'], '/sleepy', 'GET');
  await list('Free gull', ['gull'], '/free', 'GET');
  // Blocks every 50 ms: the seller's settle waits for its transfer's receipt.
  await h.chain.rpc.setAutomine(50);
}, 60_000);

afterAll(async () => {
  server?.closeAllConnections();
  await new Promise((r) => server?.close(r));
});

async function quote(capability: string): Promise<Json> {
  const q = await h.req('POST', '/api/v1/route/quote', { body: { capability, asset: 'ANM' } });
  expect(q.status).toBe(201);
  return q.json;
}

/** The seller header as a buyer builds it: from the seller's own 402, with the stock x402Client and ExactAnmScheme. */
async function sellerHeader(path: string, method: string, strip = false): Promise<string> {
  const r = await fetch(`${base}${path}`, { method, ...(method === 'POST' ? { headers: { 'content-type': 'application/json' }, body: '{}' } : {}) });
  expect(r.status).toBe(402);
  const required = decodePaymentRequiredHeader(r.headers.get('payment-required')!);
  // `strip`: a buyer that ignores the seller's reference, so the seller refuses the payment.
  if (strip) for (const a of required.accepts) a.extra = {};
  const client = new x402Client().register('native:1', new ExactAnmScheme(buyer.wallet));
  return encodePaymentSignatureHeader(await client.createPaymentPayload(required));
}

/** The fee leg: `mp1:<intent>:fee` to the fee address, with the nonce after the seller transfer's. */
function feeLeg(q: Json, header: string) {
  const seller = JSON.parse(Buffer.from(header, 'base64').toString()).payload.transaction as string;
  const fee = q.payment_requirements.accepts[0].extra.legs.fee;
  const leg = anmLeg(buyer.keys, { to: fee.payTo, amount: BigInt(fee.amount), reference: fee.reference, nonce: decodeSignedTx(seller).nonce + 1n });
  return { leg, hash: txHash(decodeSignedTx(leg.payload.transaction)), sellerHash: txHash(decodeSignedTx(seller)) };
}

const execute = (q: Json, header: string, fee: unknown, body: unknown = {}) =>
  h.req('POST', '/api/v1/route/execute', { body: { intent_id: q.intent_id, fee_payment: { legs: { fee } }, seller_payment: header, body } });
const status = async (id: string) => (await h.req('GET', `/api/v1/purchases/${id}`)).json.status;
const feeBalance = () => h.chain.rpc.getBalance(FEE_ADDRESSES.ANM);
/** The marketplace's watch, two racing processes' worth, run until the purchase leaves EXECUTING. */
const settled = (id: string) =>
  waitFor(async () => {
    await Promise.all([h.market.executions.reconcile(), h.market.executions.reconcile()]);
    return (await status(id)) !== 'EXECUTING';
  }, 20_000, `${id} leaves EXECUTING`);

describe('POST /api/v1/route/execute on the ANM lane (DESIGN §5 "Routed execution", ADR 0038)', () => {
  it('seller 200: body byte for byte, header verbatim; the fee follows the settled seller transfer, SETTLED, taken once', async () => {
    const q = await quote('parrot');
    const header = await sellerHeader('/echo', 'POST');
    const fee = feeLeg(q, header);
    const [fee0, seller0] = [await feeBalance(), await h.chain.rpc.getBalance(s.anmAddress)];
    const r = await execute(q, header, fee.leg, { say: 'hi' });
    expect(r.status).toBe(200);
    expect(r.json.status).toBe(200);
    expect(r.json.body).toBe('{"echo":{"say":"hi"},"note":"é ✓"}');
    expect(r.json.headers['payment-response']).toBeTruthy();
    expect(seen['/echo']).toBe(header);
    // The seller settled its own transfer through the facilitator; the fee waits for its depth.
    expect(await h.chain.rpc.getTransactionReceipt(fee.sellerHash)).toMatchObject({ status: 'success' });
    await settled(q.intent_id);
    expect(await status(q.intent_id)).toBe('SETTLED');
    const [sellerTx, feeTx] = [await h.chain.rpc.getTransactionByHash(fee.sellerHash), await h.chain.rpc.getTransactionByHash(fee.hash)];
    // Submitted only once the seller transfer was DEPTH deep.
    expect(feeTx!.block_height! - sellerTx!.block_height!).toBeGreaterThanOrEqual(DEPTH - 1);
    expect((await feeBalance()) - fee0).toBe(FEE);
    expect((await h.chain.rpc.getBalance(s.anmAddress)) - seller0).toBe(SELLER_PRICE);
    const p = (await h.req('GET', `/api/v1/purchases/${q.intent_id}`)).json;
    expect(p.execution).toMatchObject({ seller_status: 200, fee: { nonce: fee.hash, transaction: fee.hash } });
    await h.market.executions.reconcile();
    expect((await feeBalance()) - fee0).toBe(FEE);
  });

  it('a replayed execution is refused 409 leg_replayed and nothing is forwarded; the same seller transfer cannot back another intent', async () => {
    const q = await quote('parrot');
    const header = await sellerHeader('/echo', 'POST');
    const fee = feeLeg(q, header);
    expect((await execute(q, header, fee.leg)).status).toBe(200);
    const before = hits['/echo'];
    const again = await execute(q, header, fee.leg);
    expect(again.status).toBe(409);
    expect(again.json.error.code).toBe('leg_replayed');
    const other = await quote('parrot');
    const reused = await execute(other, header, feeLeg(other, header).leg);
    expect(reused.status).toBe(409);
    expect(reused.json.error.code).toBe('leg_replayed');
    expect(hits['/echo']).toBe(before);
    await settled(q.intent_id);
  });

  it('seller 500: SELLER_FAILED, the fee transfer is never submitted', async () => {
    const q = await quote('oracle');
    const header = await sellerHeader('/broken', 'GET');
    const fee = feeLeg(q, header);
    const fee0 = await feeBalance();
    const r = await execute(q, header, fee.leg);
    expect(r.status).toBe(200);
    expect(r.json.status).toBe(500);
    expect(r.json.purchase_status).toBe('SELLER_FAILED');
    await h.market.executions.reconcile();
    expect(await h.chain.rpc.getTransactionByHash(fee.hash)).toBeNull();
    expect(await feeBalance()).toBe(fee0);
  });

  it('a seller that refuses the payment (402): SELLER_FAILED, no fee', async () => {
    const q = await quote('heron');
    const header = await sellerHeader('/picky', 'GET', true);
    const fee = feeLeg(q, header);
    const r = await execute(q, header, fee.leg);
    expect(r.status).toBe(200);
    expect(r.json.status).toBe(402);
    expect(r.json.purchase_status).toBe('SELLER_FAILED');
    expect(await h.chain.rpc.getTransactionByHash(fee.hash)).toBeNull();
  });

  it('a seller that does not answer in time: 502 seller_unreachable, SELLER_FAILED, no fee', async () => {
    const q = await quote('sloth');
    const header = await sellerHeader('/echo', 'POST');
    const fee = feeLeg(q, header);
    const r = await execute(q, header, fee.leg);
    expect(r.status).toBe(502);
    expect(r.json.error.code).toBe('seller_unreachable');
    expect(await status(q.intent_id)).toBe('SELLER_FAILED');
    await h.market.executions.reconcile();
    expect(await h.chain.rpc.getTransactionByHash(fee.hash)).toBeNull();
  });

  it('a served answer whose seller transfer never lands: no fee, SELLER_FAILED once the fee leg expires', async () => {
    const q = await quote('gull');
    const header = await sellerHeader('/echo', 'POST');
    const fee = feeLeg(q, header);
    const r = await execute(q, header, fee.leg);
    expect(r.json.status).toBe(200);
    expect(r.json.purchase_status).toBe('EXECUTING');
    // The answer is recorded right after it is returned (ADR 0046); its record sets the deadline.
    await waitFor(async () => (await h.market.purchases.read(q.intent_id))?.ctx.execution?.seller_status === 200, 10_000, 'the answer recorded');
    await h.market.executions.reconcile();
    expect(await h.chain.rpc.getTransactionByHash(fee.hash)).toBeNull();
    const { rows } = await h.backend.db.query<{ generation: number }>(`SELECT generation FROM timers WHERE actor_id = $1 AND name = 'seller_deadline'`, [q.intent_id]);
    const t = await h.host.apply({ kind: 'purchase', id: q.intent_id }, { type: 'timer.expired', id: 'fee-expired', at: Date.now() + 3_600_000, timer: 'seller_deadline', generation: rows[0]!.generation } satisfies PurchaseEvent);
    expect(t.status).toBe('SELLER_FAILED');
    await h.market.executions.reconcile();
    expect(await h.chain.rpc.getTransactionByHash(fee.hash)).toBeNull();
  });

  it('refusals before anything is sent: a fee leg off the next nonce, an x402 v1 header, a seller transfer short of the quote', async () => {
    const q = await quote('parrot');
    const header = await sellerHeader('/echo', 'POST');
    const before = hits['/echo'];
    const legs = q.payment_requirements.accepts[0].extra.legs;
    const seller = JSON.parse(Buffer.from(header, 'base64').toString());
    const nonce = decodeSignedTx(seller.payload.transaction).nonce;
    const gap = anmLeg(buyer.keys, { to: legs.fee.payTo, amount: BigInt(legs.fee.amount), reference: legs.fee.reference, nonce: nonce + 2n });
    const refused = (await execute(q, header, gap)).json.error;
    expect(refused.code).toBe('invalid_payment');
    expect(refused.message).toContain('invalid_exact_anm_fee_nonce');
    const v1 = Buffer.from(JSON.stringify({ ...seller, x402Version: 1, scheme: 'exact-anm', network: 'native:1' })).toString('base64');
    expect((await execute(q, v1, feeLeg(q, header).leg)).json.error.code).toBe('invalid_payment');
    const short = anmLeg(buyer.keys, { to: s.anmAddress, amount: SELLER_PRICE - 1n, reference: '', nonce });
    const shortHeader = Buffer.from(JSON.stringify(short)).toString('base64');
    const shortRefused = (await execute(q, shortHeader, feeLeg(q, shortHeader).leg)).json.error;
    expect(shortRefused.code).toBe('invalid_payment');
    expect(shortRefused.message).toContain('invalid_exact_anm_amount_mismatch');
    expect(hits['/echo']).toBe(before);
    expect(await status(q.intent_id)).toBe('QUOTED');
  });
});
