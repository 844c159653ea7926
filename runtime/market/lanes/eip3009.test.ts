/**
 * The hand-encoded EIP-712 digest of a `TransferWithAuthorization` (ADR 0034) against viem's
 * `hashTypedData`, the reference it replaced, over random authorizations and token domains.
 */
import fc from 'fast-check';
import { getAddress, hashTypedData, type Hex } from 'viem';
import { describe, expect, it } from 'vitest';
import { USDC_TOKEN } from '../../../machines/money/market.ts';
import { domainOf, TRANSFER_TYPES, transferDigest, type Authorization } from './eip3009.ts';

const hexOf = (bytes: number) => fc.uint8Array({ minLength: bytes, maxLength: bytes }).map((b) => `0x${Buffer.from(b).toString('hex')}`);
const uint256 = fc.oneof(fc.bigInt({ min: 0n, max: 2n ** 256n - 1n }), fc.bigInt({ min: 0n, max: 10n ** 12n }), fc.constantFrom(0n, 2n ** 256n - 1n));
const address = fc.tuple(hexOf(20), fc.boolean()).map(([a, upper]) => (upper ? getAddress(a) : a));

describe('transferDigest', () => {
  it('is viem hashTypedData of the same authorization and domain', () => {
    fc.assert(
      fc.property(address, address, uint256, uint256, uint256, hexOf(32), fc.string(), fc.integer({ min: 1, max: 2 ** 31 }), hexOf(20), (from, to, value, after, before, nonce, name, chainId, contract) => {
        const a: Authorization = { from, to, value: value.toString(), validAfter: after.toString(), validBefore: before.toString(), nonce };
        const domain = domainOf({ name, version: '2', chainId, address: contract });
        const viem = hashTypedData({
          domain,
          types: TRANSFER_TYPES,
          primaryType: 'TransferWithAuthorization',
          message: { from: getAddress(from), to: getAddress(to), value, validAfter: after, validBefore: before, nonce: nonce as Hex },
        });
        expect(transferDigest(a, domain)).toBe(viem);
      }),
      { numRuns: 200 },
    );
  });

  it('refuses a number past uint256, which viem cannot encode either', () => {
    const a: Authorization = { from: `0x${'11'.repeat(20)}`, to: `0x${'22'.repeat(20)}`, value: (2n ** 256n).toString(), validAfter: '0', validBefore: '1', nonce: `0x${'ab'.repeat(32)}` };
    expect(transferDigest(a, domainOf(USDC_TOKEN))).toBeNull();
    expect(() => hashTypedData({ domain: domainOf(USDC_TOKEN), types: TRANSFER_TYPES, primaryType: 'TransferWithAuthorization', message: { ...a, from: getAddress(a.from), to: getAddress(a.to), value: 2n ** 256n, validAfter: 0n, validBefore: 1n, nonce: a.nonce as Hex } })).toThrow();
    expect(transferDigest({ ...a, value: (2n ** 256n - 1n).toString() }, domainOf(USDC_TOKEN))).toMatch(/^0x[0-9a-f]{64}$/);
  });
});
