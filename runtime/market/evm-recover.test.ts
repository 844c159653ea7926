/**
 * recoverSigner against viem's own recovery and against @noble/curves (the JavaScript recovery
 * it replaced, ADR 0034), and the signatures the token's ECRecover refuses: high s, v other
 * than 27/28, wrong length, r or s out of range; with each recovery backend (the native addon
 * and the WebAssembly fallback, ADR 0044).
 */
import fc from 'fast-check';
import { hashMessage, hashTypedData, recoverAddress, type Hex } from 'viem';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { bytesToHex, hexToBytes } from '@noble/hashes/utils.js';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { describe, expect, it } from 'vitest';
import { RECOVERY_BACKEND, RECOVERY_BACKENDS, recoverSigner as recoverWithDefault } from './evm-recover.ts';
import { TRANSFER_TYPES, USDC_DOMAIN } from './lanes/eip3009.ts';

const NONCE: Hex = `0x${'ab'.repeat(32)}`;
const N = secp256k1.Point.CURVE().n;
const hex = (n: bigint): string => n.toString(16).padStart(64, '0');

/** The recovery this module did before ADR 0034, in JavaScript: the reference. */
function nobleSigner(digest: Hex, signature: string): string | null {
  if (!/^0x[0-9a-fA-F]{130}$/.test(signature)) return null;
  const bytes = hexToBytes(signature.slice(2));
  const v = bytes[64]!;
  if (v !== 27 && v !== 28) return null;
  try {
    const sig = secp256k1.Signature.fromBytes(bytes.subarray(0, 64), 'compact');
    if (sig.hasHighS()) return null;
    const key = sig.addRecoveryBit(v - 27).recoverPublicKey(hexToBytes(digest.slice(2))).toBytes(false);
    return `0x${bytesToHex(keccak_256(key.subarray(1)).subarray(12))}`;
  } catch {
    return null;
  }
}

const word = fc.oneof(
  fc.bigInt({ min: 0n, max: 2n ** 256n - 1n }),
  fc.bigInt({ min: 0n, max: N / 2n + 2n }),
  fc.constantFrom(0n, 1n, N / 2n, N / 2n + 1n, N - 1n, N, 2n ** 256n - 1n),
);

it('recovers with the native addon where a prebuilt binary ships (Linux x64 with glibc, as CI)', () => {
  const glibc = process.platform === 'linux' && process.arch === 'x64' && (process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined)?.header?.glibcVersionRuntime !== undefined;
  if (glibc) expect(RECOVERY_BACKEND).toBe('native');
  expect(RECOVERY_BACKENDS.wasm).not.toBeNull();
});

const backends = Object.entries(RECOVERY_BACKENDS).filter((e): e is [string, NonNullable<(typeof e)[1]>] => e[1] !== null);

describe.each(backends)('recoverSigner (%s)', (_name, backend) => {
  const recoverSigner = (digest: Hex, signature: string) => recoverWithDefault(digest, signature, backend);

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

  it('answers as @noble/curves on any 65 bytes: signer or refusal, high s, odd v, r without a point', () => {
    const sk = 0x1234n;
    const signed = secp256k1.sign(new Uint8Array(32).fill(7), hexToBytes(hex(sk)), { prehash: false, format: 'recovered' });
    const recId = signed[0]!;
    const rs = bytesToHex(signed.subarray(1));
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 32, maxLength: 32 }), word, word, fc.integer({ min: 25, max: 30 }), (digest, r, s, v) => {
        const d: Hex = `0x${bytesToHex(digest)}`;
        const sig = `0x${hex(r)}${hex(s)}${v.toString(16).padStart(2, '0')}`;
        expect(recoverSigner(d, sig)).toBe(nobleSigner(d, sig));
      }),
      {
        numRuns: 300,
        // A real signature with both v (one is its signer, the other someone else), its high-s twin, s = n/2.
        examples: [
          [new Uint8Array(32).fill(7), BigInt(`0x${rs.slice(0, 64)}`), BigInt(`0x${rs.slice(64)}`), 27 + recId],
          [new Uint8Array(32).fill(7), BigInt(`0x${rs.slice(0, 64)}`), BigInt(`0x${rs.slice(64)}`), 28 - recId],
          [new Uint8Array(32).fill(7), BigInt(`0x${rs.slice(0, 64)}`), N - BigInt(`0x${rs.slice(64)}`), 27 + recId],
          [new Uint8Array(32).fill(1), 5n, N / 2n, 27],
        ],
      },
    );
    expect(recoverSigner(`0x${'07'.repeat(32)}`, `0x${rs}${(27 + recId).toString(16)}`)).toBe(nobleSigner(`0x${'07'.repeat(32)}`, `0x${rs}${(27 + recId).toString(16)}`));
    expect(recoverSigner(`0x${'07'.repeat(32)}`, `0x${rs}${(27 + recId).toString(16)}`)).not.toBeNull();
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
