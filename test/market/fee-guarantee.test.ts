/* eslint-disable @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-member-access --
   assertions read parsed JSON response bodies. */
/**
 * DESIGN §5 "Purchase": "The fee is taken only if the seller is paid … if the seller leg is not
 * settled before its validBefore, the purchase ends EXPIRED and the fee authorization is never
 * used" (ADR 0069), on the simulated EIP-3009 ledger. A seller leg's nonce can be used by any
 * authorization the buyer signs with it: only the leg's own transfer (same payer, the quote's
 * seller payTo, the exact seller amount) pays the seller.
 */
import { describe, expect, it } from 'vitest';
import type { Authorization } from '../../runtime/market/lanes/eip3009.ts';
import { FEE, SELLER_PRICE, useFeeGuarantee } from './fee-guarantee-setup.ts';
import { useMarket } from './harness.ts';

const h = useMarket();
const { buyer, balances, verified, elsewhere, purchaseOf } = useFeeGuarantee(h, { fund: (a, v) => h.market.ledger.fund(a, v), balance: (a) => h.market.ledger.balanceOf(a) });

describe('DESIGN §5 "The fee is taken only if the seller is paid": the seller leg counts only as its own transfer (simulated ledger)', () => {
  it('the seller nonce settled through POST /facilitator/settle as a transfer elsewhere → EXPIRED at once; seller +0, fee never used', async () => {
    const { intent, sl, fl } = await verified();
    const before = await balances();
    const alt = await elsewhere(sl);
    const st = await h.req('POST', '/facilitator/settle', { body: { x402Version: 2, paymentPayload: alt, paymentRequirements: alt.accepted } });
    expect(st.json.success).toBe(true);
    let p = await purchaseOf(intent);
    expect(p.status).toBe('EXPIRED');
    expect(p.legs.seller.transaction).toBeNull();
    expect(p.failure).toContain('seller: its nonce was used by another transfer');
    // The watch finds nothing to do: the fee authorization stays unused.
    await h.market.purchases.reconcile();
    p = await purchaseOf(intent);
    expect(p.status).toBe('EXPIRED');
    expect(await balances()).toEqual({ ...before, other: before.other + 1n });
    expect(await h.market.ledger.authorizationState(buyer.address, fl.payload.authorization.nonce)).toBe(false);
    // The seller's own authorization can no longer settle.
    const own = await h.req('POST', '/facilitator/settle', { body: { x402Version: 2, paymentPayload: sl, paymentRequirements: sl.accepted } });
    expect(own.json).toMatchObject({ success: false, errorReason: 'invalid_exact_evm_nonce_already_used' });
  });

  it('the same, settled where the marketplace did not see it: the watch reads the ledger and the purchase ends EXPIRED, fee never used', async () => {
    const { intent, sl, fl } = await verified();
    const before = await balances();
    const alt = await elsewhere(sl);
    // Straight on the ledger: no lane reports it.
    expect((await h.market.ledger.transferWithAuthorization(alt.payload.authorization as Authorization, Math.floor(Date.now() / 1000))).ok).toBe(true);
    expect((await purchaseOf(intent)).status).toBe('VERIFIED');
    await h.market.purchases.reconcile();
    const p = await purchaseOf(intent);
    expect(p.status).toBe('EXPIRED');
    expect(p.failure).toMatch(/^seller: nonce used by a transfer of 1 to/);
    expect(await balances()).toEqual({ ...before, other: before.other + 1n });
    expect(await h.market.ledger.authorizationState(buyer.address, fl.payload.authorization.nonce)).toBe(false);
  });

  it('the seller leg itself settled where the marketplace did not see it: the watch records its transaction and takes the fee (SETTLED)', async () => {
    const { intent, sl } = await verified();
    const before = await balances();
    const r = await h.market.ledger.transferWithAuthorization(sl.payload.authorization, Math.floor(Date.now() / 1000));
    expect(r.ok).toBe(true);
    await h.market.purchases.reconcile();
    const p = await purchaseOf(intent);
    expect(p.status).toBe('SETTLED');
    expect(p.legs.seller.transaction).toBe(r.ok ? r.tx : null);
    expect(await balances()).toEqual({ ...before, seller: before.seller + SELLER_PRICE, fee: before.fee + FEE });
  });

  it('issue 20 item 5: the fee leg sent to POST /facilitator/verify and /settle before the seller leg → refused, fee +0; the seller leg then settles there and the fee follows (SETTLED)', async () => {
    const { intent, sl, fl } = await verified();
    const before = await balances();
    const body = { x402Version: 2, paymentPayload: fl, paymentRequirements: fl.accepted };
    const payer = buyer.address.toLowerCase();
    const v = await h.req('POST', '/facilitator/verify', { body });
    expect(v.json).toMatchObject({ isValid: false, invalidReason: 'invalid_exact_evm_nonce_already_used', payer });
    expect(v.json.invalidMessage).toContain(`fee leg of marketplace purchase ${intent}`);
    const st = await h.req('POST', '/facilitator/settle', { body });
    expect(st.json).toMatchObject({ success: false, errorReason: 'invalid_exact_evm_nonce_already_used', payer, transaction: '' });
    expect(await balances()).toEqual(before);
    expect(await h.market.ledger.authorizationState(buyer.address, fl.payload.authorization.nonce)).toBe(false);
    expect((await purchaseOf(intent)).status).toBe('VERIFIED');
    // Sellers settle their own leg through the facilitator: the marketplace then takes the fee.
    const own = await h.req('POST', '/facilitator/settle', { body: { x402Version: 2, paymentPayload: sl, paymentRequirements: sl.accepted } });
    expect(own.json.success).toBe(true);
    const p = await purchaseOf(intent);
    expect(p.status).toBe('SETTLED');
    expect(p.legs.fee.transaction).toMatch(/^0x/);
    expect(await balances()).toEqual({ ...before, seller: before.seller + SELLER_PRICE, fee: before.fee + FEE });
    // Settled by the marketplace, the fee authorization is still not the facilitator's to answer.
    expect((await h.req('POST', '/facilitator/settle', { body })).json).toMatchObject({ success: false, errorReason: 'invalid_exact_evm_nonce_already_used' });
  });
});
