/**
 * The Ethereum address that signed a 32-byte digest (EIP-712 typed data, EIP-191 message):
 * `@noble/curves`' secp256k1 recovery on the digest viem hashed, without the per-call
 * overhead of viem's `recover*Address` (ADR 0026; figures in docs/benchmarks.md). The
 * signature is refused unless it is what the USDC token's `ECRecover` accepts: 65 bytes
 * r ‖ s ‖ v with v 27 or 28, r and s in range and s in the lower half of the order (the
 * high-s twin of a signature is another byte string for the same authorization).
 */
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { bytesToHex, hexToBytes } from '@noble/hashes/utils.js';

const SIGNATURE = /^0x[0-9a-fA-F]{130}$/;

/** Lower-case `0x` address of the signer, or null for a signature the token would refuse. */
export function recoverSigner(digest: `0x${string}`, signature: string): string | null {
  if (!SIGNATURE.test(signature)) return null;
  const bytes = hexToBytes(signature.slice(2));
  const v = bytes[64]!;
  if (v !== 27 && v !== 28) return null;
  try {
    const sig = secp256k1.Signature.fromBytes(bytes.subarray(0, 64), 'compact');
    if (sig.hasHighS()) return null;
    const key = sig.addRecoveryBit(v - 27).recoverPublicKey(hexToBytes(digest.slice(2))).toBytes(false);
    return `0x${bytesToHex(keccak_256(key.subarray(1)).subarray(12))}`;
  } catch {
    // r or s out of range, or no point for r: no signer.
    return null;
  }
}
