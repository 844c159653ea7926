/* eslint-disable @typescript-eslint/no-unsafe-argument, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-return --
   assertions read parsed JSON response bodies. */
/**
 * Conformance: quote and purchase on the USDC lane (marketplace.md "What the service does"
 * 2-4, "Fee rule", "Endpoints" :93-94, :97; DESIGN §5 "Quote", "Legs", "Purchase"). Legs are
 * signed with viem's signTypedData; the ledger is the simulated EIP-3009 token.
 */
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { beforeAll, describe, expect, it } from 'vitest';
import { seller, signedListing, signLeg, toBase64, type Seller } from '../fixtures/market.ts';
import { FEE_ADDRESSES, useMarket } from './harness.ts';

const h = useMarket();
let s: Seller;
const buyer = privateKeyToAccount(generatePrivateKey());
const SELLER_PRICE = 20_000n; // 0.02 USDC
const FEE = 100n; // ceil(0.5 % of 20,000)

beforeAll(async () => {
  s = seller();
  const res = await h.req('POST', '/api/v1/resources', { body: await signedListing(s, { name: 'Sentiment analysis', tags: ['nlp', 'sentiment'], price: '0.02' }) });
  expect(res.status).toBe(201);
  await h.market.ledger.fund(buyer.address, 1_000_000n);
});

const quote = async () => {
  const res = await h.req('POST', '/api/v1/route/quote', { body: { capability: 'sentiment', max_price: '0.05', asset: 'USDC', max_latency_ms: 2000 } });
  expect(res.status).toBe(201);
  return res.json;
};
const legs = async (o: { sellerValue?: bigint; feeValue?: bigint; sellerTo?: string } = {}) => ({
  seller: await signLeg(buyer, { to: o.sellerTo ?? s.evm.address, value: o.sellerValue ?? SELLER_PRICE }),
  fee: await signLeg(buyer, { to: FEE_ADDRESSES.USDC, value: o.feeValue ?? FEE }),
});
const purchase = (intent: string, l: Record<string, unknown>, key = `k_${Math.random()}`) =>
  h.req('POST', '/api/v1/purchase', { headers: { 'idempotency-key': key }, body: { intent_id: intent, payment: { legs: l } } });
const balances = async () => ({
  buyer: await h.market.ledger.balanceOf(buyer.address),
  seller: await h.market.ledger.balanceOf(s.evm.address),
  fee: await h.market.ledger.balanceOf(FEE_ADDRESSES.USDC),
});

describe('POST /api/v1/route/quote (marketplace.md:93, DESIGN §5 Quote)', () => {
  it('a purchase actor pi_… in QUOTED with the price split and requirements naming both legs; never charges', async () => {
    const before = await balances();
    const q = await quote();
    expect(q.intent_id).toMatch(/^pi_[0-9a-f]+$/);
    expect(q.price).toMatchObject({ seller_price: '0.020000', seller_price_atomic: '20000', marketplace_fee: '0.000100', total_price: '0.020100', total_price_atomic: '20100', fee_bps: 50 });
    const a = q.payment_requirements.accepts[0];
    expect(q.payment_requirements.x402Version).toBe(2);
    expect(a).toMatchObject({ scheme: 'exact-split', network: 'eip155:8453', amount: '20100', extra: { name: 'USD Coin', version: '2', legs: { seller: { payTo: s.evm.address, amount: '20000' }, fee: { payTo: FEE_ADDRESSES.USDC, amount: '100' } } } });
    expect((await h.req('GET', `/api/v1/purchases/${q.intent_id}`)).json.status).toBe('QUOTED');
    expect(await balances()).toEqual(before);
  });

  it('marketplace.md:24 max_price is the total ceiling: 0.0201 matches, 0.020099 does not (404 no_matching_resource)', async () => {
    expect((await h.req('POST', '/api/v1/route/quote', { body: { capability: 'sentiment', max_price: '0.0201', asset: 'USDC' } })).status).toBe(201);
    const none = await h.req('POST', '/api/v1/route/quote', { body: { capability: 'sentiment', max_price: '0.020099', asset: 'USDC' } });
    expect(none.status).toBe(404);
    expect(none.json.error.code).toBe('no_matching_resource');
    expect((await h.req('POST', '/api/v1/route/quote', { body: { capability: 'sentiment', max_price: 5 } })).json.error.code).toBe('invalid_body');
  });

  it('a blank capability is a bad field (400 invalid_body), not a quote for whatever listing comes first', async () => {
    for (const capability of ['', '   ', '\t\n']) {
      const r = await h.req('POST', '/api/v1/route/quote', { body: { capability } });
      expect({ capability, status: r.status, code: r.json.error?.code }).toEqual({ capability, status: 400, code: 'invalid_body' });
      expect(r.json.error.message).toContain('capability');
    }
    // Words the index cannot match are a search that finds nothing.
    expect((await h.req('POST', '/api/v1/route/quote', { body: { capability: '!!!' } })).json.error.code).toBe('no_matching_resource');
  });
});

describe('POST /api/v1/purchase (marketplace.md:94, :97; DESIGN §5 Purchase)', () => {
  it('both legs verify → VERIFIED with seller_payment; the fee settles only after the seller leg settled', async () => {
    const q = await quote();
    const before = await balances();
    const l = await legs();
    const res = await purchase(q.intent_id, { seller: toBase64(l.seller), fee: l.fee });
    expect(res.status).toBe(200);
    expect(res.json.status).toBe('VERIFIED');
    expect(await balances()).toEqual(before); // verified, nothing moved yet
    const header = JSON.parse(Buffer.from(res.json.seller_payment.value, 'base64').toString());
    expect(res.json.seller_payment.header).toBe('PAYMENT-SIGNATURE');
    expect(header.accepted).toMatchObject({ scheme: 'exact', network: 'eip155:8453', payTo: s.evm.address, amount: '20000' });
    // The same purchase again answers the same.
    expect((await purchase(q.intent_id, { seller: l.seller, fee: l.fee })).json.status).toBe('VERIFIED');
    // The seller settles its own leg through the facilitator, as a stock x402 seller would.
    const settled = await h.req('POST', '/facilitator/settle', { body: { x402Version: 2, paymentPayload: header, paymentRequirements: header.accepted } });
    expect(settled.json).toMatchObject({ success: true, network: 'eip155:8453' });
    const after = await h.req('GET', `/api/v1/purchases/${q.intent_id}`);
    expect(after.json.status).toBe('SETTLED');
    expect(after.json.legs.seller.transaction).toBe(settled.json.transaction);
    // marketplace.md:14 gross = seller + fee; :21-22 buyer pays seller + fee, seller receives the seller price.
    const end = await balances();
    expect(before.buyer - end.buyer).toBe(SELLER_PRICE + FEE);
    expect(end.seller - before.seller).toBe(SELLER_PRICE);
    expect(end.fee - before.fee).toBe(FEE);
  });

  it('a v1 header (X-PAYMENT shape, network "base") and a v2 object are both read as legs', async () => {
    const q = await quote();
    const l = await legs();
    const v1 = toBase64({ x402Version: 1, scheme: 'exact', network: 'base', payload: l.seller.payload });
    const res = await purchase(q.intent_id, { seller: v1, fee: l.fee });
    expect(res.status).toBe(200);
    expect(res.json.status).toBe('VERIFIED');
    const v1Header = JSON.parse(Buffer.from(res.json.seller_payment.v1.value, 'base64').toString());
    expect(v1Header).toMatchObject({ x402Version: 1, scheme: 'exact', network: 'base' });
  });

  it('the seller leg never settles before validBefore → EXPIRED, the fee is never taken', async () => {
    const q = await quote();
    expect((await purchase(q.intent_id, await legs())).json.status).toBe('VERIFIED');
    const before = await balances();
    // The deadline timer row the actor scheduled at verification, fired as the sweeper fires it.
    const { rows } = await h.backend.db.query<{ generation: number }>(`SELECT generation FROM timers WHERE actor_id = $1 AND name = 'seller_deadline'`, [q.intent_id]);
    expect(rows).toHaveLength(1);
    const r = await h.host.apply({ kind: 'purchase', id: q.intent_id }, { type: 'timer.expired', id: 't1', at: Date.now(), timer: 'seller_deadline', generation: rows[0]!.generation });
    expect(r.status).toBe('EXPIRED');
    await h.market.purchases.reconcile();
    expect(await balances()).toEqual(before);
  });

  const bad: Array<[string, () => Promise<Record<string, unknown>>, number, string, string?]> = [
    ['wrong payTo on the seller leg', () => legs({ sellerTo: privateKeyToAccount(generatePrivateKey()).address }), 402, 'invalid_payment', 'invalid_exact_evm_recipient_mismatch'],
    ['seller amount short by one unit', () => legs({ sellerValue: SELLER_PRICE - 1n }), 402, 'invalid_payment', 'invalid_exact_evm_payload_authorization_value_mismatch'],
    ['fee amount short by one unit', () => legs({ feeValue: FEE - 1n }), 402, 'invalid_payment', 'invalid_exact_evm_payload_authorization_value_mismatch'],
    ['an expired window', async () => ({ ...(await legs()), seller: await signLeg(buyer, { to: s.evm.address, value: SELLER_PRICE, validBefore: Math.floor(Date.now() / 1000) - 1 }) }), 402, 'invalid_payment', 'invalid_exact_evm_payload_authorization_valid_before'],
    ['a wrong EIP-712 domain (chainId 1)', async () => ({ ...(await legs()), seller: await signLeg(buyer, { to: s.evm.address, value: SELLER_PRICE, domain: { chainId: 1 } }) }), 402, 'invalid_payment', 'invalid_exact_evm_signature'],
    ['a wrong network in the leg', async () => ({ ...(await legs()), seller: await signLeg(buyer, { to: s.evm.address, value: SELLER_PRICE, network: 'eip155:1' }) }), 402, 'invalid_payment', 'invalid_exact_evm_network_mismatch'],
    ['both legs on one nonce (one nonce backs one transfer)', async () => {
      const nonce = `0x${'ab'.repeat(32)}` as const;
      return { seller: await signLeg(buyer, { to: s.evm.address, value: SELLER_PRICE, nonce }), fee: await signLeg(buyer, { to: FEE_ADDRESSES.USDC, value: FEE, nonce }) };
    }, 402, 'invalid_payment', 'invalid_payload'],
    ['marketplace.md:97 a missing fee leg', async () => ({ seller: (await legs()).seller }), 402, 'fee_leg_missing'],
    ['malformed base64', async () => ({ seller: '!!!not base64', fee: (await legs()).fee }), 402, 'invalid_payment', 'invalid_payload'],
    ['base64 of something not JSON', async () => ({ seller: Buffer.from('{{{').toString('base64'), fee: (await legs()).fee }), 402, 'invalid_payment', 'invalid_payload'],
    ['a payer without the balance', async () => {
      const poor = privateKeyToAccount(generatePrivateKey());
      return { seller: await signLeg(poor, { to: s.evm.address, value: SELLER_PRICE }), fee: await signLeg(poor, { to: FEE_ADDRESSES.USDC, value: FEE }) };
    }, 402, 'invalid_payment', 'invalid_exact_evm_insufficient_balance'],
  ];
  it.each(bad)('%s → %s %s, nothing settled, still QUOTED', async (_name, make, status, code, reason) => {
    const q = await quote();
    const before = await balances();
    const res = await purchase(q.intent_id, await make());
    expect(res.status).toBe(status);
    expect(res.json.error.code).toBe(code);
    if (reason) expect(res.json.error.message).toContain(reason);
    expect(await balances()).toEqual(before);
    expect((await h.req('GET', `/api/v1/purchases/${q.intent_id}`)).json.status).toBe('QUOTED');
  });

  it('marketplace.md:12, :97, DESIGN §5 "fee_leg_missing 402": no payment at all, or one without legs, is 402 fee_leg_missing; nothing settled or kept', async () => {
    const q = await quote();
    const before = await balances();
    for (const payment of [undefined, {}]) {
      const res = await h.req('POST', '/api/v1/purchase', { headers: { 'idempotency-key': 'no-fee' }, body: { intent_id: q.intent_id, ...(payment && { payment }) } });
      expect({ payment, status: res.status, code: res.json.error?.code }).toEqual({ payment, status: 402, code: 'fee_leg_missing' });
    }
    expect(await balances()).toEqual(before);
    expect((await h.req('GET', `/api/v1/purchases/${q.intent_id}`)).json.status).toBe('QUOTED');
    // "A refused purchase keeps nothing": the same key with both legs then runs (not 409).
    const res = await purchase(q.intent_id, await legs(), 'no-fee');
    expect([res.status, res.json.status]).toEqual([200, 'VERIFIED']);
  });

  it('a payment of the wrong type stays 400 invalid_body (not a missing leg)', async () => {
    const q = await quote();
    for (const payment of [null, 'x', [], { legs: 'x' }, { legs: null }]) {
      const res = await h.req('POST', '/api/v1/purchase', { headers: { 'idempotency-key': 'typed' }, body: { intent_id: q.intent_id, payment } });
      expect({ payment, status: res.status, code: res.json.error?.code }).toEqual({ payment, status: 400, code: 'invalid_body' });
    }
    for (const body of [[], 'x', null]) expect((await h.req('POST', '/api/v1/purchase', { headers: { 'idempotency-key': 'typed' }, body: JSON.stringify(body) })).json.error.code).toBe('invalid_body');
    expect((await h.req('GET', `/api/v1/purchases/${q.intent_id}`)).json.status).toBe('QUOTED');
  });

  it('a leg replayed into another purchase → 409 leg_replayed', async () => {
    const first = await quote();
    const l = await legs();
    expect((await purchase(first.intent_id, l)).status).toBe(200);
    const second = await quote();
    const before = await balances();
    const res = await purchase(second.intent_id, l);
    expect(res.status).toBe(409);
    expect(res.json.error.code).toBe('leg_replayed');
    // Refused, it moved nothing and left the second intent as quoted.
    expect(await balances()).toEqual(before);
    expect((await h.req('GET', `/api/v1/purchases/${second.intent_id}`)).json.status).toBe('QUOTED');
  });

  it('an expired quote → 410 quote_expired; no idempotency-key → 400; unknown intent → 404; bad JSON → 400', async () => {
    const q = await quote();
    h.skew = 301_000;
    try {
      expect((await purchase(q.intent_id, await legs())).json.error.code).toBe('quote_expired');
    } finally {
      h.skew = 0;
    }
    const noKey = await h.req('POST', '/api/v1/purchase', { body: { intent_id: q.intent_id, payment: { legs: {} } } });
    expect(noKey.json.error.code).toBe('idempotency_key_required');
    expect((await purchase('pi_unknown', await legs())).status).toBe(404);
    expect((await h.req('POST', '/api/v1/purchase', { headers: { 'idempotency-key': 'k' }, body: '{"intent_id":' })).json.error.code).toBe('invalid_json');
    expect((await h.req('GET', '/api/v1/purchases/nope')).status).toBe(404);
  });
});
