/* eslint-disable @typescript-eslint/no-unsafe-argument, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-member-access --
   assertions read parsed JSON response bodies. */
/**
 * The ANM lane with the real x402 packages, unchanged (DESIGN §5 "Facilitator", "Lanes"):
 * `@x402/core`'s x402Client with ExactAnmSplitScheme registered on `native:1` pays a quote;
 * with ExactAnmScheme it pays a plain `exact-anm` requirement that our facilitator verifies
 * and settles in the SDK's shapes (`HTTPFacilitatorClient`), idempotent per transfer.
 */
import { HTTPFacilitatorClient } from '@x402/core/server';
import { x402Client } from '@x402/core/client';
import { beforeAll, describe, expect, it } from 'vitest';
import { ExactAnmScheme } from '../../runtime/market/client/exact-anm.ts';
import { ExactAnmSplitScheme } from '../../runtime/market/client/exact-anm-split.ts';
import type { AnmWallet } from '../../runtime/market/client/anm-wallet.ts';
import type { Wallet } from '../../runtime/chain/codec/keys.ts';
import { seller, signedListing, toBase64, type Seller } from '../fixtures/market.ts';
import { ANM, anmBuyer } from '../fixtures/market-anm.ts';
import { useMarket } from './harness.ts';

const h = useMarket({ anm: { confirmations: 2 } });
let s: Seller;
let buyer: { keys: Wallet; wallet: AnmWallet };

beforeAll(async () => {
  s = seller();
  expect((await h.req('POST', '/api/v1/resources', { body: await signedListing(s, { name: 'Ledger notary', tags: ['notary'], asset: 'ANM', price: '0.25' }) })).status).toBe(201);
  buyer = await anmBuyer(h.chain.rpc, 10n * ANM);
  // Blocks every 50 ms: the facilitator's settle waits for the receipt.
  await h.chain.rpc.setAutomine(50);
}, 60_000);

const requirements = (o: { payTo?: string; amount?: string; network?: string; reference?: string } = {}) => ({
  scheme: 'exact-anm',
  network: (o.network ?? 'native:1') as `${string}:${string}`,
  asset: 'ANM',
  amount: o.amount ?? '1000',
  payTo: o.payTo ?? s.anmAddress,
  maxTimeoutSeconds: 300,
  extra: o.reference ? { reference: o.reference } : {},
});
const paymentRequired = (r: ReturnType<typeof requirements>) => ({ x402Version: 2, resource: { url: 'https://seller.example/notary', description: 'notary', mimeType: 'application/json' }, accepts: [r] });

describe('ANM through the x402 SDK (real packages, no mocks)', () => {
  it('/facilitator/supported lists exact-anm on native:1, and HTTPFacilitatorClient reads it', async () => {
    const r = await h.req('GET', '/facilitator/supported');
    expect(r.json.kinds).toContainEqual({ x402Version: 2, scheme: 'exact-anm', network: 'native:1' });
    const sdk = await new HTTPFacilitatorClient({ url: `${h.url}/facilitator` }).getSupported();
    expect(sdk.kinds).toContainEqual({ x402Version: 2, scheme: 'exact-anm', network: 'native:1' });
  });

  it("ExactAnmSplitScheme registered in x402Client signs both legs of a quote; the purchase verifies", async () => {
    const q = await h.req('POST', '/api/v1/route/quote', { body: { capability: 'notary', asset: 'ANM' } });
    const client = new x402Client().register('native:1', new ExactAnmSplitScheme(buyer.wallet));
    const paid = await client.createPaymentPayload(q.json.payment_requirements);
    expect(paid.accepted.scheme).toBe('exact-anm-split');
    const bought = await h.req('POST', '/api/v1/purchase', { headers: { 'idempotency-key': 'anm-split-1' }, body: { intent_id: q.json.intent_id, payment: { legs: paid.payload.legs } } });
    expect(bought.status).toBe(200);
    expect(bought.json.status).toBe('VERIFIED');
  });

  it('ExactAnmScheme in x402Client pays exact-anm; HTTPFacilitatorClient verifies and settles it; settling again answers the same transfer', async () => {
    const reference = 'order:42';
    const r = requirements({ reference });
    // A payer of its own: the buyer above holds its next nonces with its open purchase (ADR 0043).
    const payer = await anmBuyer(h.chain.rpc, 10n * ANM);
    const client = new x402Client().register('native:1', new ExactAnmScheme(payer.wallet));
    const payload = await client.createPaymentPayload(paymentRequired(r));
    const facilitator = new HTTPFacilitatorClient({ url: `${h.url}/facilitator` });
    const before = await h.chain.rpc.getBalance(s.anmAddress);
    expect(await facilitator.verify(payload, r)).toMatchObject({ isValid: true, payer: payer.keys.address });
    const settled = await facilitator.settle(payload, r);
    expect(settled).toMatchObject({ success: true, network: 'native:1', payer: payer.keys.address });
    expect((await h.chain.rpc.getTransactionReceipt(settled.transaction))?.status).toBe('success');
    const again = await facilitator.settle(payload, r);
    expect(again).toMatchObject({ success: true, transaction: settled.transaction });
    expect((await h.chain.rpc.getBalance(s.anmAddress)) - before).toBe(1000n);
    // Verify (not settle) refuses the used transfer, with the SDK's field names.
    expect(await facilitator.verify(payload, r)).toMatchObject({ isValid: false, invalidReason: 'invalid_exact_anm_nonce_already_used' });
  });

  const refusals: Array<[string, Partial<Parameters<typeof requirements>[0]>, string]> = [
    ['wrong payTo', { payTo: 'anm1qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq' }, 'invalid_exact_anm_recipient_mismatch'],
    ['amount one more than paid', { amount: '1001' }, 'invalid_exact_anm_amount_mismatch'],
    ['network eip155:1', { network: 'eip155:1' }, 'invalid_exact_anm_network_mismatch'],
    ['another reference', { reference: 'order:43' }, 'invalid_exact_anm_reference_mismatch'],
  ];
  it.each(refusals)('facilitator verify and settle refuse %s (%s), nothing submitted', async (_name, o, reason) => {
    const client = new x402Client().register('native:1', new ExactAnmScheme(buyer.wallet));
    const payload = await client.createPaymentPayload(paymentRequired(requirements({ reference: 'order:42' })));
    const body = { x402Version: 2, paymentPayload: payload, paymentRequirements: requirements({ reference: 'order:42', ...o }) };
    const v = await h.req('POST', '/facilitator/verify', { body });
    expect(v.status).toBe(200);
    expect(v.json).toMatchObject({ isValid: false, invalidReason: reason });
    const st = await h.req('POST', '/facilitator/settle', { body });
    expect(st.json).toMatchObject({ success: false, errorReason: reason, transaction: '' });
    expect(await h.chain.rpc.pendingTransactions()).toEqual([]);
  });

  it('malformed paymentPayload (bad base64, JSON that is no payload) → isValid false invalid_payload, never a 500', async () => {
    for (const paymentPayload of ['!!!', Buffer.from('{{').toString('base64'), toBase64({ x402Version: 2, accepted: requirements(), payload: { transaction: 'abc' } })]) {
      const v = await h.req('POST', '/facilitator/verify', { body: { x402Version: 2, paymentPayload, paymentRequirements: requirements() } });
      expect(v.status).toBe(200);
      expect(v.json).toMatchObject({ isValid: false, invalidReason: 'invalid_payload' });
    }
  });
});
