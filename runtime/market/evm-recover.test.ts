/**
 * recoverSigner against viem's own recovery (the reference), and the signatures the token's
 * ECRecover refuses: high s, v other than 27/28, wrong length, r or s out of range.
 */
import fc from 'fast-check';
import { hashMessage, hashTypedData, recoverAddress, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { describe, expect, it } from 'vitest';
import { recoverSigner } from './evm-recover.ts';
import { TRANSFER_TYPES, USDC_DOMAIN } from './lanes/eip3009.ts';

const NONCE: Hex = `0x${'ab'.repeat(32)}`;
const N = secp256k1.Point.CURVE().n;
const hex = (n: bigint): string => n.toString(16).padStart(64, '0');

describe('recoverSigner', () => {
  it('agrees with viem on EIP-712 and EIP-191 signatures of random keys and messages', async () => {
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ minLength: 32, maxLength: 32 }), fc.string(), fc.bigInt({ min: 0n, max: 2n ** 256n - 1n }), async (seed, text, value) => {
        const account = privateKeyToAccount(`0x${Buffer.from(seed).toString('hex')}`);
        const typed = {
          domain: USDC_DOMAIN,
          types: TRANSFER_TYPES,
          primaryType: 'TransferWithAuthorization' as const,
          message: { from: account.address, to: account.address, value, validAfter: 0n, validBefore: 1n, nonce: NONCE },
        };
        const sig = await account.signTypedData(typed);
        const digest = hashTypedData(typed);
        expect(recoverSigner(digest, sig)).toBe((await recoverAddress({ hash: digest, signature: sig })).toLowerCase());
        expect(recoverSigner(digest, sig)).toBe(account.address.toLowerCase());
        const msgSig = await account.signMessage({ message: text });
        expect(recoverSigner(hashMessage(text), msgSig)).toBe(account.address.toLowerCase());
      }),
      { numRuns: 25 },
    );
  });

  it('refuses what the token refuses, including the high-s twin viem would accept', async () => {
    const account = privateKeyToAccount(generatePrivateKey());
    const digest = hashMessage('listing');
    const sig = await account.signMessage({ message: 'listing' });
    const r = sig.slice(2, 66);
    const s = BigInt(`0x${sig.slice(66, 130)}`);
    const v = Number.parseInt(sig.slice(130), 16);
    // The twin (r, n - s, other v) recovers the same key: a second spelling of one signature.
    const twin = `0x${r}${hex(N - s)}${(v === 27 ? 28 : 27).toString(16)}`;
    expect((await recoverAddress({ hash: digest, signature: twin as Hex })).toLowerCase()).toBe(account.address.toLowerCase());
    expect(recoverSigner(digest, twin)).toBeNull();
    expect(recoverSigner(digest, `0x${r}${sig.slice(66, 130)}${(v - 27).toString(16).padStart(2, '0')}`)).toBeNull(); // v 0/1
    expect(recoverSigner(digest, `0x${r}${sig.slice(66, 130)}1d`)).toBeNull(); // v 29
    expect(recoverSigner(digest, sig.slice(0, 130))).toBeNull(); // 64 bytes
    expect(recoverSigner(digest, `${sig}00`)).toBeNull(); // 66 bytes
    expect(recoverSigner(digest, `0x${hex(N)}${sig.slice(66)}`)).toBeNull(); // r = n
    expect(recoverSigner(digest, `0x${'00'.repeat(32)}${sig.slice(66)}`)).toBeNull(); // r = 0
    expect(recoverSigner(digest, `0x${r}${'00'.repeat(32)}1b`)).toBeNull(); // s = 0
    expect(recoverSigner(digest, 'not hex')).toBeNull();
    // The other v with the same r, s recovers someone else, never the signer.
    expect(recoverSigner(digest, `0x${r}${sig.slice(66, 130)}${(v === 27 ? 28 : 27).toString(16)}`)).not.toBe(account.address.toLowerCase());
  });
});
