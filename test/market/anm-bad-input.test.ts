/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-return --
   assertions read parsed JSON response bodies. */
/**
 * Bad input on the ANM lane (marketplace.md "What the service does" 4, :97 "a missing fee leg
 * fails verification", "Payment lanes" :33 "never eip155:1"; DESIGN §5 "Purchase"): each
 * refusal is the right code with the verify reason, never a 500; nothing is submitted to the
 * node, no balance moves, and the purchase stays QUOTED.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { NETWORKS } from '../../machines/chain/index.ts';
import type { Wallet } from '../../runtime/chain/codec/keys.ts';
import { flipByte } from '../../runtime/chain/devnet/fixtures.test-util.ts';
import { seller, signedListing, toBase64, type Seller } from '../fixtures/market.ts';
import { ANM, anmBuyer, anmLegs } from '../fixtures/market-anm.ts';
import { FEE_ADDRESSES, useMarket } from './harness.ts';

const h = useMarket({ anm: { confirmations: 2 } });
let s: Seller;
let buyer: Wallet;
let other: Wallet;
let poor: Wallet;

beforeAll(async () => {
  s = seller();
  expect((await h.req('POST', '/api/v1/resources', { body: await signedListing(s, { name: 'Lattice prover', tags: ['prover'], asset: 'ANM', price: '0.5' }) })).status).toBe(201);
  buyer = (await anmBuyer(h.chain.rpc, 10n * ANM)).keys;
  other = (await anmBuyer(h.chain.rpc, 10n * ANM)).keys;
  poor = (await anmBuyer(h.chain.rpc, 1n)).keys;
}, 60_000);

type Quote = Parameters<typeof anmLegs>[2];
const quote = async (): Promise<Quote> => {
  const res = await h.req('POST', '/api/v1/route/quote', { body: { capability: 'prover', asset: 'ANM' } });
  expect(res.status).toBe(201);
  return res.json;
};
const purchase = (intent: string, legs: Record<string, unknown>) =>
  h.req('POST', '/api/v1/purchase', { headers: { 'idempotency-key': `k_${Math.random()}` }, body: { intent_id: intent, payment: { legs } } });
const chainState = async () => ({
  pending: (await h.chain.rpc.pendingTransactions()).length,
  buyer: await h.chain.rpc.getBalance(buyer.address),
  seller: await h.chain.rpc.getBalance(s.anmAddress),
  fee: await h.chain.rpc.getBalance(FEE_ADDRESSES.ANM),
});
const legsFor = (q: Quote, o: Parameters<typeof anmLegs>[3] = {}, from = buyer) => anmLegs(h.chain.rpc, from, q, o);

type Case = [name: string, status: number, code: string, reason: string, make: (q: Quote) => Promise<Record<string, unknown>>];
const bad: Case[] = [
  ['wrong payTo on the seller leg', 402, 'invalid_payment', 'invalid_exact_anm_recipient_mismatch', (q) => legsFor(q, { seller: { to: other.address } })],
  ['seller amount short by one nANM', 402, 'invalid_payment', 'invalid_exact_anm_amount_mismatch', (q) => legsFor(q, { seller: { amount: 500_000_000n - 1n } })],
  ['fee amount short by one nANM', 402, 'invalid_payment', 'invalid_exact_anm_amount_mismatch', (q) => legsFor(q, { fee: { amount: 2_500_000n - 1n } })],
  ['marketplace.md:33 the leg names network eip155:1', 402, 'invalid_payment', 'invalid_exact_anm_network_mismatch', (q) => legsFor(q, { seller: { network: 'eip155:1' } })],
  ['the transfer is signed for the test chain (id 1001)', 402, 'invalid_payment', 'invalid_exact_anm_network_mismatch', (q) => legsFor(q, { seller: { chainId: NETWORKS.test.chainId } })],
  ['the seller leg carries the fee leg’s reference', 402, 'invalid_payment', 'invalid_exact_anm_reference_mismatch', (q) => legsFor(q, { seller: { reference: `mp1:${q.intent_id}:fee` } })],
  ['the seller leg carries another intent’s reference', 402, 'invalid_payment', 'invalid_exact_anm_reference_mismatch', (q) => legsFor(q, { seller: { reference: 'mp1:pi_0000:seller' } })],
  ['a signature that does not verify', 402, 'invalid_payment', 'invalid_exact_anm_signature', async (q) => {
    const l = await legsFor(q);
    const tx = l.seller.payload.transaction;
    return { ...l, seller: { ...l.seller, payload: { transaction: flipByte(tx, tx.length / 2 - 10) } } };
  }],
  ['marketplace.md:12, :97 a missing fee leg', 402, 'fee_leg_missing', '', async (q) => ({ seller: (await legsFor(q)).seller })],
  ['malformed base64', 402, 'invalid_payment', 'invalid_payload', async (q) => ({ seller: '!!!not base64', fee: (await legsFor(q)).fee })],
  ['base64 of something not JSON', 402, 'invalid_payment', 'invalid_payload', async (q) => ({ seller: Buffer.from('{{{').toString('base64'), fee: (await legsFor(q)).fee })],
  ['a payload that is not a signed transfer', 402, 'invalid_payment', 'invalid_payload', async (q) => {
    const l = await legsFor(q);
    return { ...l, seller: toBase64({ ...l.seller, payload: { transaction: 'zz' } }) };
  }],
  ['an expired window (validBefore passed)', 402, 'invalid_payment', 'invalid_exact_anm_valid_before', async (q) => {
    const l = await legsFor(q);
    return { ...l, seller: { ...l.seller, payload: { ...l.seller.payload, validBefore: String(Math.floor(Date.now() / 1000) - 1) } } };
  }],
  ['the fee leg skips a nonce', 402, 'invalid_payment', 'invalid_exact_anm_fee_nonce', (q) => legsFor(q, { fee: { nonce: 7n } })],
  ['the fee leg comes from another payer', 402, 'invalid_payment', 'invalid_exact_anm_fee_nonce', async (q) => ({ ...(await legsFor(q)), fee: (await legsFor(q, {}, other)).fee })],
  ['a payer without the balance', 402, 'invalid_payment', 'invalid_exact_anm_insufficient_balance', (q) => legsFor(q, {}, poor)],
];

describe('ANM purchase bad input (never a 500, nothing submitted or moved)', () => {
  it.each(bad)('%s → %i %s %s', async (_name, status, code, reason, make) => {
    const q = await quote();
    const before = await chainState();
    const res = await purchase(q.intent_id, await make(q));
    expect(res.status).toBe(status);
    expect(res.json.error.code).toBe(code);
    if (reason) expect(res.json.error.message).toContain(reason);
    expect(await chainState()).toEqual(before);
    expect((await h.req('GET', `/api/v1/purchases/${q.intent_id}`)).json.status).toBe('QUOTED');
  });

  it('a transfer replayed into another purchase → 409 leg_replayed', async () => {
    const first = await quote();
    const legs = await legsFor(first);
    expect((await purchase(first.intent_id, legs)).status).toBe(200);
    const second = await quote();
    const res = await purchase(second.intent_id, legs);
    // Bound to the first intent's references, so the second refuses it before the binding does.
    expect(res.status).toBe(402);
    expect(res.json.error.message).toContain('invalid_exact_anm_reference_mismatch');
    // Re-signed for the second intent with the same nonces: refused once the first's seller leg is on chain.
    const again = await legsFor(second);
    await h.chain.rpc.sendRawTransaction(legs.seller.payload.transaction);
    await h.chain.rpc.mine(1);
    const replay = await purchase(second.intent_id, again);
    expect(replay.status).toBe(409);
    expect(replay.json.error.code).toBe('leg_replayed');
    expect((await h.req('GET', `/api/v1/purchases/${second.intent_id}`)).json.status).toBe('QUOTED');
  });

  it('a leg the node already has (submitted before the purchase) → 409 leg_replayed', async () => {
    const q = await quote();
    const legs = await legsFor(q);
    await h.chain.rpc.sendRawTransaction(legs.seller.payload.transaction);
    const res = await purchase(q.intent_id, legs);
    expect(res.status).toBe(409);
    expect(res.json.error.code).toBe('leg_replayed');
    expect(res.json.error.message).toContain('invalid_exact_anm_nonce_already_used');
    await h.chain.rpc.mine(1);
  });
});
