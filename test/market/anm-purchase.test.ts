/* eslint-disable @typescript-eslint/no-unsafe-argument, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-return --
   assertions read parsed JSON response bodies. */
/**
 * Conformance: quote and purchase on the ANM lane, end to end on a devnet with the indexer
 * and chain router (marketplace.md :10-12, :14, "Fee rule" :20-22, "Payment lanes" :30, :33,
 * "Endpoints" :93-94, :97; DESIGN §3, §5 "Legs", "Purchase"; ADR 0016). Legs are signed by
 * ExactAnmSplitScheme, each paying a chain fee of 1,000 nANM; a leg counts as settled 3 blocks
 * deep here (12 in production).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { decodeSignedTx, txHash } from '../../machines/chain/index.ts';
import { ExactAnmSplitScheme } from '../../runtime/market/client/exact-anm-split.ts';
import { catchUpAnmLegs, verifyAnmLegs } from '../../runtime/market/anm-purchase.ts';
import type { PurchaseContext } from '../../machines/purchase/context.ts';
import type { Wallet } from '../../runtime/chain/codec/keys.ts';
import type { AnmWallet } from '../../runtime/market/client/anm-wallet.ts';
import { waitFor } from '../helpers/backends.ts';
import { seller, signedListing, toBase64, type Seller } from '../fixtures/market.ts';
import { ANM, anmBuyer } from '../fixtures/market-anm.ts';
import { FEE_ADDRESSES, useMarket } from './harness.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- parsed JSON bodies
type Json = any;
const DEPTH = 3;
const h = useMarket({ anm: { confirmations: DEPTH } });
let s: Seller;
let buyer: { keys: Wallet; wallet: AnmWallet };
const SELLER_PRICE = 500_000_000n; // 0.5 ANM
const FEE = 2_500_000n; // ceil(0.5 % of it)
const CHAIN_FEE = 1_000n; // per transfer, the buyer's own

beforeAll(async () => {
  s = seller();
  const res = await h.req('POST', '/api/v1/resources', { body: await signedListing(s, { name: 'Quantum oracle', tags: ['oracle'], asset: 'ANM', price: '0.5' }) });
  expect(res.status).toBe(201);
  const b = await anmBuyer(h.chain.rpc, 10n * ANM);
  buyer = { ...b, wallet: { ...b.wallet, fee: CHAIN_FEE } };
}, 60_000);

const quote = async () => {
  const res = await h.req('POST', '/api/v1/route/quote', { body: { capability: 'oracle', max_price: '1', asset: 'ANM' } });
  expect(res.status).toBe(201);
  return res.json;
};
const sign = async (q: Json) => (await new ExactAnmSplitScheme(buyer.wallet).createPaymentPayload(2, q.payment_requirements.accepts[0])).payload.legs as Record<'seller' | 'fee', Json>;
const purchase = (intent: string, legs: Record<string, unknown>) =>
  h.req('POST', '/api/v1/purchase', { headers: { 'idempotency-key': `k_${Math.random()}` }, body: { intent_id: intent, payment: { legs } } });
const read = async (id: string) => (await h.req('GET', `/api/v1/purchases/${id}`)).json;
const balances = async () => ({
  buyer: await h.chain.rpc.getBalance(buyer.keys.address),
  seller: await h.chain.rpc.getBalance(s.anmAddress),
  fee: await h.chain.rpc.getBalance(FEE_ADDRESSES.ANM),
});
const pending = async () => (await h.chain.rpc.pendingTransactions()).map((t) => t.hash);
/** The seller leg as the seller's stock x402 server would settle it: through our facilitator. */
const settleSeller = async (bought: Json) => {
  const header = JSON.parse(Buffer.from(bought.seller_payment.value, 'base64').toString());
  const settling = h.req('POST', '/facilitator/settle', { body: { x402Version: 2, paymentPayload: header, paymentRequirements: header.accepted } });
  await waitFor(async () => (await pending()).length > 0, 10_000, 'the seller leg in the mempool');
  await h.chain.rpc.mine(1);
  return (await settling).json;
};
const txHashOf = (leg: Json): string => txHash(decodeSignedTx(leg.payload.transaction));

describe('ANM quote (marketplace.md:30 native lane, :93; DESIGN §5 Quote)', () => {
  it('QUOTED with 9-place amounts and exact-anm-split requirements on native:1 naming both legs and their references; :10 never charges', async () => {
    const before = await balances();
    const q = await quote();
    expect(await balances()).toEqual(before);
    expect(await pending()).toEqual([]);
    expect(q.price).toMatchObject({ asset: 'ANM', network: 'native:1', seller_price: '0.500000000', seller_price_atomic: '500000000', marketplace_fee_atomic: '2500000', total_price_atomic: '502500000', fee_bps: 50 });
    expect(q.payment_requirements.accepts[0]).toMatchObject({
      scheme: 'exact-anm-split', network: 'native:1', asset: 'ANM', amount: '502500000',
      extra: { intent_id: q.intent_id, legs: { seller: { payTo: s.anmAddress, amount: '500000000', reference: `mp1:${q.intent_id}:seller` }, fee: { payTo: FEE_ADDRESSES.ANM, amount: '2500000', reference: `mp1:${q.intent_id}:fee` } } },
    });
  });

  it('marketplace.md:24 max_price is a ceiling on the total in ANM: 0.5025 matches, 0.502499999 does not (404 no_matching_resource)', async () => {
    expect((await h.req('POST', '/api/v1/route/quote', { body: { capability: 'oracle', max_price: '0.5025', asset: 'ANM' } })).status).toBe(201);
    const none = await h.req('POST', '/api/v1/route/quote', { body: { capability: 'oracle', max_price: '0.502499999', asset: 'ANM' } });
    expect(none.status).toBe(404);
    expect(none.json.error.code).toBe('no_matching_resource');
  });
});

describe('ANM purchase (marketplace.md:11-12, :94, :97; DESIGN §5 Purchase: the fee only after the seller is paid)', () => {
  it('VERIFIED moves nothing; the seller settles its leg; the fee is submitted only once the seller leg is 3 deep; SETTLED when the fee leg is', async () => {
    const q = await quote();
    const before = await balances();
    const legs = await sign(q);
    const res = await purchase(q.intent_id, { seller: toBase64(legs.seller), fee: legs.fee });
    expect(res.status).toBe(200);
    expect(res.json.status).toBe('VERIFIED');
    expect(await balances()).toEqual(before);
    expect(await pending()).toEqual([]);
    // The same purchase again answers the same.
    expect((await purchase(q.intent_id, legs)).json.status).toBe('VERIFIED');
    const header = JSON.parse(Buffer.from(res.json.seller_payment.value, 'base64').toString());
    expect(res.json.seller_payment.header).toBe('PAYMENT-SIGNATURE');
    expect(header.accepted).toMatchObject({ scheme: 'exact-anm', network: 'native:1', payTo: s.anmAddress, amount: '500000000', extra: { reference: `mp1:${q.intent_id}:seller` } });

    const settled = await settleSeller(res.json);
    expect(settled).toMatchObject({ success: true, network: 'native:1' });
    // One block deep: not settled yet, and the fee transfer is not submitted.
    await new Promise((r) => setTimeout(r, 300));
    await h.market.purchases.reconcile();
    expect((await read(q.intent_id)).legs.seller.transaction).toBeNull();
    expect(await pending()).toEqual([]);
    await h.chain.rpc.mine(DEPTH - 1);
    await waitFor(async () => (await read(q.intent_id)).legs.seller.transaction === settled.transaction, 10_000, 'the seller leg settled');
    await h.market.purchases.reconcile();
    expect(await pending()).toHaveLength(1); // the fee transfer, now
    await h.chain.rpc.mine(DEPTH);
    const done = await waitFor(async () => {
      const p = await read(q.intent_id);
      return p.status === 'SETTLED' && p;
    }, 10_000, 'SETTLED');
    expect(done.legs.seller.transaction).toBe(settled.transaction);
    // marketplace.md:14 gross = seller + fee; :21-22 the buyer pays seller + fee, the seller receives
    // its price; :30 the buyer pays its own chain fee on each transfer, never out of the price.
    const end = await balances();
    expect(before.buyer - end.buyer).toBe(SELLER_PRICE + FEE + 2n * CHAIN_FEE);
    expect(end.seller - before.seller).toBe(SELLER_PRICE);
    expect(end.fee - before.fee).toBe(FEE);
  });

  it('the seller leg never settles before its window ends → EXPIRED, the fee transfer is never submitted', async () => {
    const q = await quote();
    expect((await purchase(q.intent_id, await sign(q))).json.status).toBe('VERIFIED');
    const before = await balances();
    const { rows } = await h.backend.db.query<{ generation: number }>(`SELECT generation FROM timers WHERE actor_id = $1 AND name = 'seller_deadline'`, [q.intent_id]);
    expect(rows).toHaveLength(1);
    const r = await h.host.apply({ kind: 'purchase', id: q.intent_id }, { type: 'timer.expired', id: 't1', at: Date.now(), timer: 'seller_deadline', generation: rows[0]!.generation });
    expect(r.status).toBe('EXPIRED');
    await h.market.purchases.reconcile();
    expect(await pending()).toEqual([]);
    expect(await balances()).toEqual(before);
  });

  it('a reorg that takes both legs off the chain and mines them again: the purchase follows it and ends SETTLED, the fee taken once', async () => {
    const q = await quote();
    const legs = await sign(q);
    const before = await balances();
    const settled = await settleSeller((await purchase(q.intent_id, legs)).json);
    await h.chain.rpc.mine(DEPTH - 1);
    await waitFor(async () => (await read(q.intent_id)).legs.seller.transaction !== null, 10_000, 'the seller leg settled');
    await h.market.purchases.reconcile(); // submits the fee transfer
    await h.chain.rpc.mine(1);
    await waitFor(async () => (await h.chain.rpc.getTransactionReceipt(txHashOf(legs.fee))) !== null, 10_000, 'the fee leg in a block');
    // Both legs' blocks are replaced; their transfers go back to the mempool and are mined again.
    await h.chain.rpc.reorg(DEPTH + 1);
    await h.chain.rpc.mine(DEPTH + 1);
    const done = await waitFor(async () => {
      await h.market.purchases.reconcile();
      const p = await read(q.intent_id);
      return p.status === 'SETTLED' && p;
    }, 15_000, 'SETTLED after the reorg');
    expect(done.legs).toMatchObject({ seller: { transaction: settled.transaction }, fee: { transaction: txHashOf(legs.fee) } });
    const end = await balances();
    expect(end.fee - before.fee).toBe(FEE);
    expect(end.seller - before.seller).toBe(SELLER_PRICE);
  });

  it('a seller leg mined while the purchase was still QUOTED (its signals ignored then) is caught up from the node after verification', async () => {
    const q = await quote();
    const legs = await sign(q);
    const quoted = (await h.market.purchases.read(q.intent_id))!.ctx;
    const verified = await verifyAnmLegs(h.market.anm!, quoted, legs); // checked before the buyer submits
    await h.chain.rpc.sendRawTransaction(legs.seller.payload.transaction);
    await h.chain.rpc.mine(DEPTH);
    await new Promise((r) => setTimeout(r, 300)); // the indexer's signals reach a QUOTED purchase, which ignores them
    const r = await h.host.apply({ kind: 'purchase', id: q.intent_id }, { type: 'purchase.verify', id: 'verify:race', at: Date.now(), legs: verified });
    expect(r.status).toBe('VERIFIED');
    expect((await read(q.intent_id)).legs.seller.transaction).toBeNull();
    for (const e of await catchUpAnmLegs(h.market.anm!, r.snapshot.context as PurchaseContext, Date.now())) await h.host.apply({ kind: 'purchase', id: q.intent_id }, e);
    expect((await read(q.intent_id)).legs.seller.transaction).toBe(txHashOf(legs.seller));
    await h.market.purchases.reconcile(); // and the fee follows
    await h.chain.rpc.mine(DEPTH);
    await waitFor(async () => (await read(q.intent_id)).status === 'SETTLED', 10_000, 'SETTLED');
  });

  it('a seller leg reorged off the chain after it settled is taken back: VERIFIED again, the fee (next nonce) cannot land without it', async () => {
    const q = await quote();
    const legs = await sign(q);
    const res = await purchase(q.intent_id, legs);
    const settled = await settleSeller(res.json);
    expect(settled.success).toBe(true);
    await h.chain.rpc.mine(DEPTH - 1);
    await waitFor(async () => (await read(q.intent_id)).legs.seller.transaction !== null, 10_000, 'the seller leg settled');
    await h.market.purchases.reconcile(); // submits the fee transfer
    expect(await pending()).toHaveLength(1);
    const feeBefore = await h.chain.rpc.getBalance(FEE_ADDRESSES.ANM);
    // The blocks holding the seller leg are replaced; the seller transfer is dropped for good.
    await h.chain.rpc.reorg(DEPTH + 1, [settled.transaction]);
    await waitFor(async () => (await read(q.intent_id)).legs.seller.transaction === null, 10_000, 'the seller leg taken back');
    await h.chain.rpc.mine(DEPTH + 2);
    await new Promise((r) => setTimeout(r, 300));
    const p = await read(q.intent_id);
    expect(p.status).toBe('VERIFIED');
    expect(p.legs.fee.transaction).toBeNull();
    expect(await h.chain.rpc.getBalance(FEE_ADDRESSES.ANM)).toBe(feeBefore);
    expect(await h.chain.rpc.getTransactionReceipt(txHashOf(legs.fee))).toBeNull();
    // Its window then ends: EXPIRED, the fee never taken.
    const { rows } = await h.backend.db.query<{ generation: number }>(`SELECT generation FROM timers WHERE actor_id = $1 AND name = 'seller_deadline'`, [q.intent_id]);
    const r = await h.host.apply({ kind: 'purchase', id: q.intent_id }, { type: 'timer.expired', id: 't2', at: Date.now(), timer: 'seller_deadline', generation: rows[0]!.generation });
    expect(r.status).toBe('EXPIRED');
    expect(await h.chain.rpc.getBalance(FEE_ADDRESSES.ANM)).toBe(feeBefore);
  });
});
