/* eslint-disable @typescript-eslint/no-unsafe-argument, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-return --
   assertions read parsed JSON response bodies. */
/**
 * The ANM lane's account nonces held by a purchase until it ends (ADR 0043; DESIGN §5
 * "Legs", "Purchase": the fee is taken only if the seller is paid, and then it is taken). A
 * fee transfer waits, signed, for its seller transfer to be settled; its nonce is the one
 * right after the seller's. A buyer who signs a second execution or purchase with its
 * account's next nonce meanwhile would have that one's seller transfer take the first fee's
 * nonce: the first purchase would end FEE_FAILED with its seller paid. Every way in refuses
 * it: routed execution, purchase and the facilitator's `exact-anm`.
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
import { ExactAnmSplitScheme } from '../../runtime/market/client/exact-anm-split.ts';
import type { AnmWallet } from '../../runtime/market/client/anm-wallet.ts';
import { ExactAnmServerScheme } from '../../runtime/market/server/exact-anm.ts';
import type { Wallet } from '../../runtime/chain/codec/keys.ts';
import { waitFor } from '../helpers/backends.ts';
import { seller, signedListing, toBase64, type Seller } from '../fixtures/market.ts';
import { ANM, anmBuyer, anmLeg } from '../fixtures/market-anm.ts';
import { FEE_ADDRESSES, useMarket } from './harness.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- parsed JSON bodies
type Json = any;
const DEPTH = 2;
const h = useMarket({ anm: { confirmations: DEPTH }, forward: { allowPrivate: true, timeoutMs: 3_000 } });
const FEE = 1_250_000n; // ceil(0.5 % of 0.25 ANM)
let s: Seller;
let server: Server;
let base: string;
let hits = 0;

beforeAll(async () => {
  s = seller();
  const rs = new x402ResourceServer(new HTTPFacilitatorClient({ url: `${h.url}/facilitator` })).register('native:1', new ExactAnmServerScheme());
  const app = express();
  app.use(express.json());
  app.use((req, _res, next) => {
    if (req.headers['payment-signature']) hits++;
    next();
  });
  app.use(paymentMiddleware({ 'POST /echo': { accepts: { scheme: 'exact-anm', price: '0.25 ANM', network: 'native:1', payTo: s.anmAddress }, description: 'Echo' } }, rs));
  app.post('/echo', (req, res) => res.json({ echo: req.body }));
  server = app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const r = await h.req('POST', '/api/v1/resources', { body: await signedListing(s, { name: 'Echo parrot', tags: ['parrot'], description: 'Echo', endpoint: `${base}/echo`, method: 'POST', asset: 'ANM', price: '0.25' }) });
  expect(r.status).toBe(201);
  // Blocks every 50 ms: the seller's settle waits for its transfer's receipt. The marketplace's
  // watch, which submits fee transfers, runs only when a test calls it.
  await h.chain.rpc.setAutomine(50);
}, 60_000);

afterAll(async () => {
  server?.closeAllConnections();
  await new Promise((r) => server?.close(r));
});

const buyerOf = async (): Promise<{ keys: Wallet; wallet: AnmWallet }> => anmBuyer(h.chain.rpc, 10n * ANM);
const quote = async (): Promise<Json> => {
  const q = await h.req('POST', '/api/v1/route/quote', { body: { capability: 'parrot', asset: 'ANM' } });
  expect(q.status).toBe(201);
  return q.json;
};
const nonceOf = (transaction: string): bigint => decodeSignedTx(transaction).nonce;
const hashOf = (transaction: string): string => txHash(decodeSignedTx(transaction));
const status = async (id: string) => (await h.req('GET', `/api/v1/purchases/${id}`)).json.status;
const feeBalance = () => h.chain.rpc.getBalance(FEE_ADDRESSES.ANM);

/** The seller header as the buyer's stock x402Client builds it from the seller's 402: the wallet's next node nonce. */
async function sellerHeader(buyer: { wallet: AnmWallet }): Promise<string> {
  const r = await fetch(`${base}/echo`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
  expect(r.status).toBe(402);
  const client = new x402Client().register('native:1', new ExactAnmScheme(buyer.wallet));
  return encodePaymentSignatureHeader(await client.createPaymentPayload(decodePaymentRequiredHeader(r.headers.get('payment-required')!)));
}

const sellerTransaction = (header: string): string => JSON.parse(Buffer.from(header, 'base64').toString()).payload.transaction;

/** The fee leg of a quote with the nonce after the seller transfer's. */
function feeLeg(buyer: { keys: Wallet }, q: Json, header: string) {
  const fee = q.payment_requirements.accepts[0].extra.legs.fee;
  return anmLeg(buyer.keys, { to: fee.payTo, amount: BigInt(fee.amount), reference: fee.reference, nonce: nonceOf(sellerTransaction(header)) + 1n });
}

const execute = (q: Json, header: string, fee: unknown) =>
  h.req('POST', '/api/v1/route/execute', { body: { intent_id: q.intent_id, fee_payment: { legs: { fee } }, seller_payment: header, body: {} } });

/** A served execution whose fee transfer is signed and waiting: the seller transfer is on the chain, the watch has not run. */
async function servedExecution(buyer: { keys: Wallet; wallet: AnmWallet }) {
  const q = await quote();
  const header = await sellerHeader(buyer);
  const fee = feeLeg(buyer, q, header);
  const r = await execute(q, header, fee);
  expect(r.status).toBe(200);
  expect(r.json.purchase_status).toBe('EXECUTING');
  return { q, fee, feeNonce: nonceOf(fee.payload.transaction) };
}

const settleExecution = (id: string) =>
  waitFor(async () => {
    await h.market.executions.reconcile();
    return (await status(id)) !== 'EXECUTING';
  }, 20_000, `${id} leaves EXECUTING`);

describe('a second execution signed over a pending fee transfer\'s nonce (ADR 0043)', () => {
  it('is refused 409 leg_replayed (invalid_exact_anm_nonce_held), nothing is forwarded, and the first execution takes its fee: SETTLED', async () => {
    const buyer = await buyerOf();
    const first = await servedExecution(buyer);
    const fee0 = await feeBalance();
    // The buyer's wallet asks the node: its next nonce is the one the first fee transfer carries.
    const q2 = await quote();
    const header2 = await sellerHeader(buyer);
    expect(nonceOf(sellerTransaction(header2))).toBe(first.feeNonce);
    const before = hits;
    const r = await execute(q2, header2, feeLeg(buyer, q2, header2));
    expect(r.status).toBe(409);
    expect(r.json.error.code).toBe('leg_replayed');
    expect(r.json.error.message).toContain('invalid_exact_anm_nonce_held');
    expect(hits).toBe(before);
    expect(await status(q2.intent_id)).toBe('QUOTED');
    await settleExecution(first.q.intent_id);
    expect(await status(first.q.intent_id)).toBe('SETTLED');
    expect((await feeBalance()) - fee0).toBe(FEE);
    // Once the fee transfer is on the chain, the node's next nonce is past it: the buyer goes on.
    const q3 = await quote();
    const header3 = await sellerHeader(buyer);
    expect(nonceOf(sellerTransaction(header3))).toBe(first.feeNonce + 1n);
    expect((await execute(q3, header3, feeLeg(buyer, q3, header3))).json.purchase_status).toBe('EXECUTING');
    await settleExecution(q3.intent_id);
  });

  it('the facilitator refuses to verify or settle another transfer at a held nonce; the held transfers themselves pass', async () => {
    const buyer = await buyerOf();
    const first = await servedExecution(buyer);
    const other = seller();
    const stray = anmLeg(buyer.keys, { to: other.anmAddress, amount: 1_000n, reference: '', nonce: first.feeNonce });
    const body = { x402Version: 2, paymentPayload: stray, paymentRequirements: stray.accepted };
    const v = await h.req('POST', '/facilitator/verify', { body });
    expect(v.json).toMatchObject({ isValid: false, invalidReason: 'invalid_exact_anm_nonce_held' });
    const st = await h.req('POST', '/facilitator/settle', { body });
    expect(st.json).toMatchObject({ success: false, errorReason: 'invalid_exact_anm_nonce_held' });
    expect(await h.chain.rpc.getTransactionByHash(hashOf(stray.payload.transaction))).toBeNull();
    // The fee transfer itself, as the purchase recorded it, still verifies.
    const own = await h.req('POST', '/facilitator/verify', { body: { x402Version: 2, paymentPayload: first.fee, paymentRequirements: first.fee.accepted } });
    expect(own.json).toMatchObject({ isValid: true });
    await settleExecution(first.q.intent_id);
    expect(await status(first.q.intent_id)).toBe('SETTLED');
  });
});

describe('purchases hold their legs\' nonces the same way (ADR 0043)', () => {
  const sign = async (buyer: { wallet: AnmWallet }, q: Json) => (await new ExactAnmSplitScheme(buyer.wallet).createPaymentPayload(2, q.payment_requirements.accepts[0])).payload.legs as Record<'seller' | 'fee', Json>;
  const purchase = (q: Json, legs: Record<'seller' | 'fee', Json>) =>
    h.req('POST', '/api/v1/purchase', { headers: { 'idempotency-key': `k_${Math.random()}` }, body: { intent_id: q.intent_id, payment: { legs: { seller: toBase64(legs.seller), fee: legs.fee } } } });
  const settleSeller = async (bought: Json) => {
    const header = JSON.parse(Buffer.from(bought.seller_payment.value, 'base64').toString());
    return (await h.req('POST', '/facilitator/settle', { body: { x402Version: 2, paymentPayload: header, paymentRequirements: header.accepted } })).json;
  };

  it('a second purchase over the first one\'s nonces, or over its waiting fee\'s, is refused; the first settles with its fee', async () => {
    const buyer = await buyerOf();
    const q1 = await quote();
    const legs1 = await sign(buyer, q1);
    const r1 = await purchase(q1, legs1);
    expect(r1.json.status).toBe('VERIFIED');
    // Signed over the same account nonces before the first seller leg was submitted.
    const q2 = await quote();
    const same = await purchase(q2, await sign(buyer, q2));
    expect(same.status).toBe(409);
    expect(same.json.error.code).toBe('leg_replayed');
    expect(same.json.error.message).toContain('invalid_exact_anm_nonce_held');
    expect((await settleSeller(r1.json)).success).toBe(true);
    // The seller leg is on the chain; the wallet's next nonce is now the waiting fee transfer's.
    const next = await sign(buyer, q2);
    expect(nonceOf(next.seller.payload.transaction)).toBe(nonceOf(legs1.fee.payload.transaction));
    const over = await purchase(q2, next);
    expect(over.status).toBe(409);
    expect(over.json.error.message).toContain('invalid_exact_anm_nonce_held');
    await waitFor(async () => {
      await h.market.purchases.reconcile();
      return (await status(q1.intent_id)) === 'SETTLED';
    }, 20_000, 'the first purchase SETTLED');
  });

  it('two purchases racing over the same nonces: one is VERIFIED, the other refused, and nothing of the loser is held', async () => {
    const buyer = await buyerOf();
    const [qa, qb] = [await quote(), await quote()];
    const [la, lb] = [await sign(buyer, qa), await sign(buyer, qb)];
    const [ra, rb] = await Promise.all([purchase(qa, la), purchase(qb, lb)]);
    expect([ra.status, rb.status].sort()).toEqual([200, 409]);
    const [won, lost] = ra.status === 200 ? [qa, qb] : [qb, qa];
    const { rows } = await h.backend.db.query<{ intent_id: string }>(`SELECT intent_id FROM market_anm_nonce_holds WHERE payer = $1`, [buyer.keys.address]);
    expect(rows.map((r) => r.intent_id)).toEqual([won.intent_id, won.intent_id]);
    expect(await status(lost.intent_id)).toBe('QUOTED');
  });

  it('a purchase that ended without its transfers on the chain releases their nonces', async () => {
    const buyer = await buyerOf();
    const q1 = await quote();
    const legs1 = await sign(buyer, q1);
    expect((await purchase(q1, legs1)).json.status).toBe('VERIFIED');
    const { rows } = await h.backend.db.query<{ generation: number }>(`SELECT generation FROM timers WHERE actor_id = $1 AND name = 'seller_deadline'`, [q1.intent_id]);
    const t = await h.host.apply({ kind: 'purchase', id: q1.intent_id }, { type: 'timer.expired', id: 'deadline', at: Date.now(), timer: 'seller_deadline', generation: rows[0]!.generation } satisfies PurchaseEvent);
    expect(t.status).toBe('EXPIRED');
    const q2 = await quote();
    const legs2 = await sign(buyer, q2);
    expect(nonceOf(legs2.seller.payload.transaction)).toBe(nonceOf(legs1.seller.payload.transaction));
    expect((await purchase(q2, legs2)).json.status).toBe('VERIFIED');
  });

  it('legs ahead of the node\'s next nonce are accepted: a wallet may sign its next purchase while one is pending', async () => {
    const buyer = await buyerOf();
    const q1 = await quote();
    const legs1 = await sign(buyer, q1);
    expect((await purchase(q1, legs1)).json.status).toBe('VERIFIED');
    const after = nonceOf(legs1.fee.payload.transaction) + 1n;
    const q2 = await quote();
    const legs2 = await sign({ wallet: { ...buyer.wallet, nextNonce: () => Promise.resolve(after) } }, q2);
    expect((await purchase(q2, legs2)).json.status).toBe('VERIFIED');
  });
});
