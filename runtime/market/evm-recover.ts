/**
 * The Ethereum address that signed a 32-byte digest (EIP-712 typed data, EIP-191 message):
 * public-key recovery by libsecp256k1 compiled to WebAssembly (`tiny-secp256k1`, ADR 0034),
 * several times cheaper than the same recovery in JavaScript, and two recoveries are most of
 * a purchase's CPU. The signature is refused unless it is what the USDC token's `ECRecover`
 * accepts: 65 bytes r ‖ s ‖ v with v 27 or 28, r and s in 1..n-1 and s in the lower half of
 * the order (the high-s twin of a signature is another byte string for the same
 * authorization). Those rules are checked here, not left to the library, so they hold
 * whatever it accepts.
 */
import { keccak_256 } from '@noble/hashes/sha3.js';
import { bytesToHex, hexToBytes } from '@noble/hashes/utils.js';
import { recover } from 'tiny-secp256k1';

const SIGNATURE = /^0x[0-9a-fA-F]{130}$/;
/** The order of the secp256k1 group, and its half: a low-s signature has 0 < s <= n/2. */
const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
const HALF_N = N >> 1n;

/** Lower-case `0x` address of the signer, or null for a signature the token would refuse. */
export function recoverSigner(digest: `0x${string}`, signature: string): string | null {
  if (!SIGNATURE.test(signature)) return null;
  const r = BigInt(`0x${signature.slice(2, 66)}`);
  const s = BigInt(`0x${signature.slice(66, 130)}`);
  const v = Number.parseInt(signature.slice(130), 16);
  if (v !== 27 && v !== 28) return null;
  if (r === 0n || r >= N || s === 0n || s > HALF_N) return null;
  const bytes = hexToBytes(signature.slice(2, 130));
  try {
    const key = recover(hexToBytes(digest.slice(2)), bytes, v - 27 as 0 | 1, false);
    if (key === null) return null;
    return `0x${bytesToHex(keccak_256(key.subarray(1)).subarray(12))}`;
  } catch {
    // No curve point has x = r (or a digest of the wrong length): no signer.
    return null;
  }
}
