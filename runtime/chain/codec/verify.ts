/**
 * The single place where the runtime verifies ML-DSA-65 signatures. Today the backend is
 * noble (audited, pure JS, ~1.7 ms per verify); a faster verified backend may be put here
 * later with noble kept as the fallback and the cross-check oracle in tests
 * (docs/adr/0003-ml-dsa-backend.md). Nothing else in runtime/ may call ml_dsa65.verify.
 */
import {
  TX_SIGNATURE_CONTEXT,
  nobleVerify,
  verifyTx,
  type Network,
  type SignatureVerifier,
  type SignedTransaction,
  type VerifyTxResult,
} from '../../../machines/chain/index.ts';

export interface VerifyBackend {
  readonly name: string;
  readonly verify: SignatureVerifier;
}

export const nobleBackend: VerifyBackend = { name: 'noble-post-quantum', verify: nobleVerify };

/** Swap point for a faster backend; it must agree with noble on every test vector. */
const backend: VerifyBackend = nobleBackend;

export function verifyBackendName(): string {
  return backend.name;
}

/** True iff `sig` is a valid ML-DSA-65 signature of `msg` under `pub`. Never throws. */
export function verifySignature(
  pub: Uint8Array,
  msg: Uint8Array,
  sig: Uint8Array,
  context: Uint8Array = TX_SIGNATURE_CONTEXT,
): boolean {
  return backend.verify(pub, msg, sig, context);
}

/** verifyTx with the runtime's signature backend. */
export function verifyTransaction(input: SignedTransaction | Uint8Array | string, network: Network): VerifyTxResult {
  return verifyTx(input, { chainId: network.chainId, hrp: network.hrp, verify: verifySignature });
}
