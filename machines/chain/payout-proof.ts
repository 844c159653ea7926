/**
 * Proof that a merchant holds the key of its payout address (DESIGN §7 "payout address …
 * verified by signing a challenge"): an ML-DSA-65 signature, under its own context so it can
 * never pass as a transaction signature, over the challenge the dashboard issued and the
 * address. The proof carries the public key: an address is a hash of it.
 */
import { bytesToHex, hexToBytes } from '@noble/hashes/utils.js';
import { addressFromPublicKey, NETWORKS, type NetworkName } from './address.ts';
import { ML_DSA65_PUBLIC_KEY_LENGTH, ML_DSA65_SIGNATURE_LENGTH, mlDsaSign, type SignatureVerifier } from './mldsa.ts';

export const PAYOUT_PROOF_CONTEXT: Uint8Array = new TextEncoder().encode('ANM-PAYOUT-v1');

export function payoutProofMessage(challenge: string, address: string): Uint8Array {
  return new TextEncoder().encode(`anmpay payout verify\n${challenge}\n${address}`);
}

/** `<public key hex>.<signature hex>`: one token to paste into the dashboard. */
export function signPayoutProof(challenge: string, address: string, secretKey: Uint8Array, publicKey: Uint8Array, entropy: Uint8Array): string {
  const sig = mlDsaSign(payoutProofMessage(challenge, address), secretKey, PAYOUT_PROOF_CONTEXT, entropy);
  return `${bytesToHex(publicKey)}.${bytesToHex(sig)}`;
}

/** Whether `proof` was made for this challenge by the key behind `address` on `network`. */
export function checkPayoutProof(proof: string, challenge: string, address: string, network: NetworkName, verify: SignatureVerifier): boolean {
  const m = /^([0-9a-f]+)\.([0-9a-f]+)$/.exec(proof.trim());
  if (!m || m[1]!.length !== ML_DSA65_PUBLIC_KEY_LENGTH * 2 || m[2]!.length !== ML_DSA65_SIGNATURE_LENGTH * 2) return false;
  const pub = hexToBytes(m[1]!);
  if (addressFromPublicKey(pub, NETWORKS[network].hrp) !== address) return false;
  return verify(pub, payoutProofMessage(challenge, address), hexToBytes(m[2]!), PAYOUT_PROOF_CONTEXT);
}
