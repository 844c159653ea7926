/**
 * The only file in machines/ that touches @noble/post-quantum. Everything here is pure:
 * key derivation takes the seed from the caller and signing takes its entropy from the
 * caller (default: none, i.e. FIPS 204 deterministic signing), so vectors are reproducible.
 * Runtime code verifies through runtime/chain/codec/verify.ts, which may put a faster
 * backend in front of `nobleVerify` (see docs/adr/0003-ml-dsa-backend.md).
 */
import { ml_dsa65 } from '@noble/post-quantum/ml-dsa.js';
import { asciiToBytes } from './bytes.ts';

export const ML_DSA65_PUBLIC_KEY_LENGTH = 1952;
export const ML_DSA65_SECRET_KEY_LENGTH = 4032;
export const ML_DSA65_SIGNATURE_LENGTH = 3309;
export const ML_DSA65_SEED_LENGTH = 32;

/** FIPS 204 context string `ctx` used for every ANM transaction signature. */
export const TX_SIGNATURE_CONTEXT: Uint8Array = asciiToBytes('ANM-TX-v1');

/** (publicKey, message, signature, context) → valid? Never throws. */
export type SignatureVerifier = (
  publicKey: Uint8Array,
  message: Uint8Array,
  signature: Uint8Array,
  context: Uint8Array,
) => boolean;

export interface MlDsaKeypair {
  publicKey: Uint8Array;
  secretKey: Uint8Array;
}

/** ML-DSA-65 KeyGen_internal from a 32-byte seed ξ. */
export function keypairFromSeed(seed: Uint8Array): MlDsaKeypair {
  if (seed.length !== ML_DSA65_SEED_LENGTH) {
    throw new RangeError(`ML-DSA-65 seed must be ${ML_DSA65_SEED_LENGTH} bytes, got ${seed.length}`);
  }
  const { publicKey, secretKey } = ml_dsa65.keygen(seed);
  return { publicKey, secretKey };
}

export function publicKeyFromSecretKey(secretKey: Uint8Array): Uint8Array {
  return ml_dsa65.getPublicKey(secretKey);
}

/**
 * Pure ML-DSA-65 signature with context. `entropy` is the 32-byte `rnd` of FIPS 204:
 * omitted means deterministic (rnd = 32 zero bytes); the runtime passes fresh random
 * bytes for hedged signing.
 */
export function mlDsaSign(
  message: Uint8Array,
  secretKey: Uint8Array,
  context: Uint8Array,
  entropy?: Uint8Array,
): Uint8Array {
  return ml_dsa65.sign(message, secretKey, { context, extraEntropy: entropy ?? false });
}

/** Reference verifier (noble). Malformed inputs yield false instead of throwing. */
export const nobleVerify: SignatureVerifier = (publicKey, message, signature, context) => {
  if (publicKey.length !== ML_DSA65_PUBLIC_KEY_LENGTH) return false;
  if (signature.length !== ML_DSA65_SIGNATURE_LENGTH) return false;
  try {
    return ml_dsa65.verify(signature, message, publicKey, { context });
  } catch {
    return false;
  }
};
