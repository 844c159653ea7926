/* eslint-disable @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-member-access --
   assertions read parsed JSON response bodies. */
/**
 * DESIGN §5 "Purchase": "The fee is taken only if the seller is paid … if the seller leg is not
 * settled before its validBefore, the purchase ends EXPIRED and the fee authorization is never
 * used" (ADR 0069), on a real chain: the viem ledger against a local EVM node running an
 * EIP-3009 token. `authorizationState` is true after any use of a nonce, `cancelAuthorization`
 * included; the seller leg counts as settled only when the transaction whose AuthorizationUsed
 * names its nonce carries that authorization's own Transfer.
 */
import { getAddress, parseSignature } from 'viem';
import { describe, expect, it } from 'vitest';
import { domainOf } from '../../runtime/market/lanes/eip3009.ts';
import { useEvmLane } from './evm-lane.ts';
import { FEE, SELLER_PRICE, useFeeGuarantee } from './fee-guarantee-setup.ts';
import { useMarket } from './harness.ts';

const lane = useEvmLane();
const h = useMarket({ usdcLedger: () => lane.ledger });
const { buyer, balances, verified, elsewhere, purchaseOf } = useFeeGuarantee(h, { fund: (a, v) => lane.deployed.mint(a as `0x${string}`, v), balance: (a) => lane.balance(a), token: () => lane.token });

/** The watch, then the purchase as read, and the fee authorization's state on the chain. */
async function afterWatch(intent: string, feeNonce: string) {
  await h.market.purchases.reconcile();
  const p = await purchaseOf(intent);
  return { p, feeUsed: await lane.ledger.authorizationState(buyer.address, feeNonce) };
}

describe('DESIGN §5 "The fee is taken only if the seller is paid": the seller leg counts only as its own Transfer (viem ledger, local EVM node)', () => {
  it('the buyer cancels the seller authorization (cancelAuthorization) → EXPIRED; seller +0, the fee authorization never used', async () => {
    const { intent, sl, fl } = await verified();
    const before = await balances();
    const nonce = sl.payload.authorization.nonce;
    const sig = await buyer.signTypedData({
      domain: domainOf(lane.token),
      types: { CancelAuthorization: [{ name: 'authorizer', type: 'address' }, { name: 'nonce', type: 'bytes32' }] },
      primaryType: 'CancelAuthorization',
      message: { authorizer: buyer.address, nonce },
    });
    const { v, r, s: ss } = parseSignature(sig);
    const tx = await lane.wallet.writeContract({ address: lane.deployed.address, abi: lane.deployed.abi, functionName: 'cancelAuthorization', args: [getAddress(buyer.address), nonce, Number(v), r, ss], account: lane.wallet.account!, chain: lane.wallet.chain });
    expect((await lane.client.waitForTransactionReceipt({ hash: tx })).status).toBe('success');
    expect(await lane.ledger.authorizationState(buyer.address, nonce)).toBe(true);
    const { p, feeUsed } = await afterWatch(intent, fl.payload.authorization.nonce);
    expect(p.status).toBe('EXPIRED');
    expect(p.legs.seller.transaction).toBeNull();
    expect(p.failure).toBe(`seller: authorization cancelled (${tx})`);
    expect(feeUsed).toBe(false);
    expect(await balances()).toEqual(before);
  });

  it('the seller nonce used on chain by another transfer (1 unit to a third address) → EXPIRED; seller +0, the fee authorization never used', async () => {
    const { intent, sl, fl } = await verified();
    const before = await balances();
    await lane.submit((await elsewhere(sl)).payload);
    const { p, feeUsed } = await afterWatch(intent, fl.payload.authorization.nonce);
    expect(p.status).toBe('EXPIRED');
    expect(p.failure).toMatch(/^seller: nonce used by another transfer \(0x[0-9a-f]{64}\)$/);
    expect(feeUsed).toBe(false);
    expect(await balances()).toEqual({ ...before, other: before.other + 1n });
  });

  it('the seller leg itself submitted on chain by someone else → the watch finds its Transfer: SETTLED, fee taken', async () => {
    const { intent, sl, fl } = await verified();
    const before = await balances();
    await lane.submit(sl.payload);
    const { p, feeUsed } = await afterWatch(intent, fl.payload.authorization.nonce);
    expect(p.status).toBe('SETTLED');
    expect(p.legs.seller.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    expect(feeUsed).toBe(true);
    expect(await balances()).toEqual({ ...before, seller: before.seller + SELLER_PRICE, fee: before.fee + FEE });
  });
});
