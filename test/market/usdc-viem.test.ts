/* eslint-disable @typescript-eslint/no-unsafe-argument, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-return --
   assertions read parsed JSON response bodies. */
/**
 * The USDC lane on a real chain (DESIGN §5 "Lanes", "Legs", "Purchase"; ADR 0025): the
 * marketplace on PostgreSQL + NATS with the viem ledger against a local EVM node running an
 * EIP-3009 token the test deploys. Legs are signed with viem's signTypedData (through
 * ExactSplitEvmScheme in @x402/core's x402Client); every balance is read from the chain.
 */
import { x402Client } from '@x402/core/client';
import type { Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { beforeAll, describe, expect, it } from 'vitest';
import { ExactSplitEvmScheme } from '../../runtime/market/client/exact-split-evm.ts';
import { seller, signedListing, signLeg, toBase64, type Seller } from '../fixtures/market.ts';
import { realAvailable } from '../helpers/backends.ts';
import { useEvmLane } from './evm-lane.ts';
import { FEE_ADDRESSES, useMarket } from './harness.ts';

const lane = useEvmLane();
const h = useMarket({ usdcLedger: () => lane.ledger });
let s: Seller;
const buyer = privateKeyToAccount(generatePrivateKey());
const SELLER_PRICE = 20_000n;
const FEE = 100n;

beforeAll(async () => {
  s = seller();
  const res = await h.req('POST', '/api/v1/resources', { body: await signedListing(s, { name: 'Chain sentiment', tags: ['onchain', 'sentiment'], price: '0.02' }) });
  expect(res.status).toBe(201);
  await lane.deployed.mint(buyer.address, 1_000_000n);
}, 60_000);

const quote = async () => {
  const res = await h.req('POST', '/api/v1/route/quote', { body: { capability: 'sentiment', max_price: '0.05', asset: 'USDC' } });
  expect(res.status).toBe(201);
  return res.json;
};
const purchase = (intent: string, legs: Record<string, unknown>) =>
  h.req('POST', '/api/v1/purchase', { headers: { 'idempotency-key': `k_${Math.random()}` }, body: { intent_id: intent, payment: { legs } } });
const balances = async () => ({ buyer: await lane.balance(buyer.address), seller: await lane.balance(s.evm.address), fee: await lane.balance(FEE_ADDRESSES.USDC) });
const status = async (intent: string) => (await h.req('GET', `/api/v1/purchases/${intent}`)).json.status;
/** The seller's leg as the stock seller hands it to the facilitator. */
const sellerHeader = (bought: { json: { seller_payment: { value: string } } }) => JSON.parse(Buffer.from(bought.json.seller_payment.value, 'base64').toString());

describe('the marketplace on the viem USDC lane (real chain, PostgreSQL + NATS)', () => {
  it('runs on the real backends in CI', () => {
    if (process.env.CI) expect(realAvailable).toBe(true);
  });

  it("the quote names the configured token: asset is its address, extra.name/version its EIP-712 domain", async () => {
    const q = await quote();
    expect(q.payment_requirements.accepts[0]).toMatchObject({ scheme: 'exact-split', network: 'eip155:8453', asset: lane.token.address, amount: '20100', extra: { name: 'Local USD Coin', version: '2' } });
    const supported = await h.req('GET', '/facilitator/supported');
    expect(supported.json.signers['eip155:*']).toEqual([privateKeyToAccount(lane.relayerKey).address]);
  });

  it('purchase → seller leg settled on chain through the facilitator → fee leg settled after it; balances on chain match', async () => {
    const q = await quote();
    const before = await balances();
    // A token other than USDC on Base is one the buyer opts into (the SDK's spend controls).
    const client = x402Client.fromConfig({
      schemes: [{ network: 'eip155:8453', client: new ExactSplitEvmScheme(buyer) }],
      spendControls: { allowedAssets: [{ network: 'eip155:8453', asset: lane.token.address, maxAmountPerPayment: '50000' }] },
    });
    const paid = await client.createPaymentPayload(q.payment_requirements);
    const bought = await purchase(q.intent_id, paid.payload.legs as Record<string, unknown>);
    expect(bought.status).toBe(200);
    expect(bought.json.status).toBe('VERIFIED');
    expect(await balances()).toEqual(before); // verified, nothing moved on chain
    const header = sellerHeader(bought);
    expect(header.accepted).toMatchObject({ scheme: 'exact', network: 'eip155:8453', asset: lane.token.address, payTo: s.evm.address, amount: '20000' });
    const settled = await h.req('POST', '/facilitator/settle', { body: { x402Version: 2, paymentPayload: header, paymentRequirements: header.accepted } });
    expect(settled.json).toMatchObject({ success: true, network: 'eip155:8453', payer: buyer.address.toLowerCase() });
    const receipt = await lane.client.getTransactionReceipt({ hash: settled.json.transaction as Hex });
    expect(receipt.status).toBe('success');
    expect(await status(q.intent_id)).toBe('SETTLED');
    expect(await balances()).toEqual({ buyer: before.buyer - SELLER_PRICE - FEE, seller: before.seller + SELLER_PRICE, fee: before.fee + FEE });
    const feeNonce = (paid.payload.legs as { fee: { payload: { authorization: { nonce: Hex } } } }).fee.payload.authorization.nonce;
    expect(await lane.ledger.authorizationState(buyer.address, feeNonce)).toBe(true);
    // Settling the same seller leg again is answered with the same transaction; nothing moves.
    const again = await h.req('POST', '/facilitator/settle', { body: { x402Version: 2, paymentPayload: header, paymentRequirements: header.accepted } });
    expect(again.json).toMatchObject({ success: true, transaction: settled.json.transaction });
    expect((await balances()).buyer).toBe(before.buyer - SELLER_PRICE - FEE);
  });

  it('a seller leg settled on chain by someone else is found by reconcile, then the fee settles', async () => {
    const q = await quote();
    const legs = { seller: await signLeg(buyer, { to: s.evm.address, value: SELLER_PRICE, token: lane.token }), fee: await signLeg(buyer, { to: FEE_ADDRESSES.USDC, value: FEE, token: lane.token }) };
    expect((await purchase(q.intent_id, legs)).json.status).toBe('VERIFIED');
    const before = await balances();
    // The seller submits its own leg straight to the token, not through the marketplace.
    await lane.submit(legs.seller.payload);
    expect(await status(q.intent_id)).toBe('VERIFIED');
    await h.market.purchases.reconcile();
    expect(await status(q.intent_id)).toBe('SETTLED');
    expect(await balances()).toEqual({ buyer: before.buyer - SELLER_PRICE - FEE, seller: before.seller + SELLER_PRICE, fee: before.fee + FEE });
  });

  it('a fee leg already used on chain (a lost report) is recorded from the chain once the seller leg settles; taken once', async () => {
    const q = await quote();
    const legs = { seller: await signLeg(buyer, { to: s.evm.address, value: SELLER_PRICE, token: lane.token }), fee: await signLeg(buyer, { to: FEE_ADDRESSES.USDC, value: FEE, token: lane.token }) };
    expect((await purchase(q.intent_id, legs)).json.status).toBe('VERIFIED');
    const before = await balances();
    const used = await lane.ledger.transferWithAuthorization(legs.fee.payload.authorization, Math.floor(Date.now() / 1000), legs.fee.payload.signature);
    expect(used).toMatchObject({ ok: true, replay: false });
    expect(await status(q.intent_id)).toBe('VERIFIED');
    const settled = await h.req('POST', '/facilitator/settle', { body: { x402Version: 2, paymentPayload: legs.seller, paymentRequirements: legs.seller.accepted } });
    expect(settled.json.success).toBe(true);
    expect(await status(q.intent_id)).toBe('SETTLED');
    expect(await balances()).toEqual({ buyer: before.buyer - SELLER_PRICE - FEE, seller: before.seller + SELLER_PRICE, fee: before.fee + FEE });
  });

  it('a replayed nonce is refused: the leg_replayed code with the SDK reason, nothing moves', async () => {
    const q1 = await quote();
    const legs = { seller: await signLeg(buyer, { to: s.evm.address, value: SELLER_PRICE, token: lane.token }), fee: await signLeg(buyer, { to: FEE_ADDRESSES.USDC, value: FEE, token: lane.token }) };
    expect((await purchase(q1.intent_id, legs)).status).toBe(200);
    const settled = await h.req('POST', '/facilitator/settle', { body: { x402Version: 2, paymentPayload: legs.seller, paymentRequirements: legs.seller.accepted } });
    expect(settled.json.success).toBe(true);
    const before = await balances();
    const q2 = await quote();
    const replay = await purchase(q2.intent_id, { seller: toBase64(legs.seller), fee: legs.fee });
    expect(replay.status).toBe(409);
    expect(replay.json.error.code).toBe('leg_replayed');
    const verify = await h.req('POST', '/facilitator/verify', { body: { x402Version: 2, paymentPayload: legs.seller, paymentRequirements: legs.seller.accepted } });
    expect(verify.json).toMatchObject({ isValid: false, invalidReason: 'invalid_exact_evm_nonce_already_used' });
    // The same nonce signed over another amount: the chain's used nonce refuses it.
    const other = await signLeg(buyer, { to: s.evm.address, value: SELLER_PRICE + 1n, nonce: legs.seller.payload.authorization.nonce, token: lane.token });
    const settleOther = await h.req('POST', '/facilitator/settle', { body: { x402Version: 2, paymentPayload: other, paymentRequirements: other.accepted } });
    expect(settleOther.json).toMatchObject({ success: false, errorReason: 'invalid_exact_evm_nonce_already_used' });
    expect(await balances()).toEqual(before);
  });

  it('an insufficient balance on chain is refused at purchase (invalid_payment, invalid_exact_evm_insufficient_balance); nothing moves', async () => {
    const poor = privateKeyToAccount(generatePrivateKey());
    await lane.deployed.mint(poor.address, SELLER_PRICE); // the seller leg alone, not the total
    const q = await quote();
    const legs = { seller: await signLeg(poor, { to: s.evm.address, value: SELLER_PRICE, token: lane.token }), fee: await signLeg(poor, { to: FEE_ADDRESSES.USDC, value: FEE, token: lane.token }) };
    const res = await purchase(q.intent_id, legs);
    expect(res.status).toBe(402);
    expect(res.json.error).toMatchObject({ code: 'invalid_payment' });
    expect(JSON.stringify(res.json.error)).toContain('invalid_exact_evm_insufficient_balance');
    expect(await lane.balance(poor.address)).toBe(SELLER_PRICE);
    expect(await status(q.intent_id)).toBe('QUOTED');
  });

  it("a leg signed over USDC-on-Base's domain is refused for this token (invalid_exact_evm_signature)", async () => {
    const q = await quote();
    const legs = { seller: await signLeg(buyer, { to: s.evm.address, value: SELLER_PRICE, token: lane.token, domain: { name: 'USD Coin' } }), fee: await signLeg(buyer, { to: FEE_ADDRESSES.USDC, value: FEE, token: lane.token }) };
    const res = await purchase(q.intent_id, legs);
    expect(res.status).toBe(402);
    expect(JSON.stringify(res.json.error)).toContain('invalid_exact_evm_signature');
  });
});
