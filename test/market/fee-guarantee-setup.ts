/* eslint-disable @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-return --
   assertions read parsed JSON response bodies. */
/**
 * The fee-guarantee tests' world on the USDC lane (DESIGN §5 "Purchase", ADR 0069), on whichever
 * ledger the market runs: a listing, a funded buyer, a third address, and VERIFIED purchases
 * with their two signed legs. Call at module level after `useMarket` (its hooks run first).
 */
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { beforeAll, expect } from 'vitest';
import type { UsdcToken } from '../../runtime/market/lanes/usdc-ledger.ts';
import { seller, signedListing, signLeg, type Seller } from '../fixtures/market.ts';
import { FEE_ADDRESSES, type MarketHarness } from './harness.ts';

export const SELLER_PRICE = 20_000n;
export const FEE = 100n;

export interface LedgerAccess {
  fund(address: string, amount: bigint): Promise<unknown>;
  balance(address: string): Promise<bigint>;
  /** The token legs are signed for (default: the simulated ledger's). */
  token?(): UsdcToken;
}

export function useFeeGuarantee(h: MarketHarness, ledger: LedgerAccess) {
  let s: Seller;
  const buyer = privateKeyToAccount(generatePrivateKey());
  const other = privateKeyToAccount(generatePrivateKey()).address;
  beforeAll(async () => {
    s = seller();
    expect((await h.req('POST', '/api/v1/resources', { body: await signedListing(s, { name: 'Sentiment analysis', tags: ['sentiment'], price: '0.02' }) })).status).toBe(201);
    await ledger.fund(buyer.address, 1_000_000n);
  }, 60_000);
  const sign = (to: string, value: bigint, nonce?: `0x${string}`) => signLeg(buyer, { to, value, ...(nonce && { nonce }), ...(ledger.token && { token: ledger.token() }) });
  return {
    buyer,
    other,
    sign,
    balances: async () => ({ seller: await ledger.balance(s.evm.address), fee: await ledger.balance(FEE_ADDRESSES.USDC), other: await ledger.balance(other) }),
    /** A VERIFIED purchase and its two signed legs. */
    verified: async () => {
      const q = (await h.req('POST', '/api/v1/route/quote', { body: { capability: 'sentiment', asset: 'USDC' } })).json;
      const sl = await sign(s.evm.address, SELLER_PRICE);
      const fl = await sign(FEE_ADDRESSES.USDC, FEE);
      const res = await h.req('POST', '/api/v1/purchase', { headers: { 'idempotency-key': `k_${q.intent_id}` }, body: { intent_id: q.intent_id, payment: { legs: { seller: sl, fee: fl } } } });
      expect(res.json.status).toBe('VERIFIED');
      return { intent: q.intent_id as string, sl, fl };
    },
    /** Another authorization by the buyer under the seller leg's nonce: 1 unit to the third address. */
    elsewhere: (sl: Awaited<ReturnType<typeof signLeg>>) => sign(other, 1n, sl.payload.authorization.nonce),
    purchaseOf: async (intent: string) => (await h.req('GET', `/api/v1/purchases/${intent}`)).json,
  };
}
