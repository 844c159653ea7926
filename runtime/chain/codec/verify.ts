/**
 * The single place where the runtime verifies ML-DSA-65 signatures
 * (docs/adr/0003-ml-dsa-backend.md). The backend is PQClean's reference ML-DSA-65 compiled
 * to WebAssembly (mldsa65-wasm/, FIPS 204 verify with the context string, ~8x noble's
 * speed); noble (audited, pure JS) is the fallback and the cross-check oracle in tests.
 * The backend is chosen on first use: the WebAssembly module is checked (sha256),
 * instantiated and self-tested against noble; if any step fails, or the module fails
 * later at run time, verification goes to noble, a process warning says why, and
 * `verifyBackendName()` reports it. `ANM_VERIFY_BACKEND=noble` forces noble.
 * Nothing else in runtime/ may call ml_dsa65.verify.
 */
import { createHash } from 'node:crypto';
import {
  TX_SIGNATURE_CONTEXT,
  nobleVerify,
  verifyTx,
  type Network,
  type SignatureVerifier,
  type SignedTransaction,
  type VerifyTxResult,
} from '../../../machines/chain/index.ts';
import { WASM_BACKEND_NAME, loadWasmVerifier } from './mldsa65-wasm/loader.ts';

export interface VerifyBackend {
  readonly name: string;
  readonly verify: SignatureVerifier;
}

export const NOBLE_BACKEND_NAME = 'noble-post-quantum';
export const nobleBackend: VerifyBackend = { name: NOBLE_BACKEND_NAME, verify: nobleVerify };

/** `ANM_VERIFY_BACKEND`: `noble` forces noble; unset, `auto` or `wasm` try WebAssembly first. */
export type VerifyBackendChoice = 'auto' | 'wasm' | 'noble';

const reason = (err: unknown): string => (err instanceof Error ? err.message : String(err));
const fallback = (why: string): VerifyBackend => ({ name: `${NOBLE_BACKEND_NAME} (fallback: ${why})`, verify: nobleVerify });

/**
 * Picks the backend: noble when asked, else the loaded fast verifier, guarded so that if it
 * ever throws, this call and every later one go to noble (`onFallback` is told why, once).
 * Exported for tests; the runtime uses it once, lazily, through `verifySignature`.
 */
export function selectVerifyBackend(
  choice: VerifyBackendChoice,
  load: () => SignatureVerifier = loadWasmVerifier,
  onFallback: (why: string) => void = warnFallback,
): { current: () => VerifyBackend } {
  if (choice === 'noble') return { current: () => nobleBackend };
  let backend: VerifyBackend;
  let fast: SignatureVerifier;
  try {
    fast = load();
  } catch (err) {
    const why = `WebAssembly backend failed to load: ${reason(err)}`;
    onFallback(why);
    backend = fallback(why);
    return { current: () => backend };
  }
  const guarded: SignatureVerifier = (pub, msg, sig, ctx) => {
    try {
      return fast(pub, msg, sig, ctx);
    } catch (err) {
      const why = `WebAssembly backend failed at run time: ${reason(err)}`;
      backend = fallback(why);
      onFallback(why);
      return nobleVerify(pub, msg, sig, ctx);
    }
  };
  backend = { name: WASM_BACKEND_NAME, verify: guarded };
  return { current: () => backend };
}

function warnFallback(why: string): void {
  process.emitWarning(`ML-DSA-65 verification uses noble: ${why}`, { code: 'ANM_VERIFY_BACKEND_FALLBACK' });
}

function choiceFromEnv(): VerifyBackendChoice {
  const v = process.env.ANM_VERIFY_BACKEND?.trim().toLowerCase();
  if (v === undefined || v === '' || v === 'auto') return 'auto';
  if (v === 'noble' || v === 'wasm') return v;
  warnFallback(`ANM_VERIFY_BACKEND=${v} is not auto, wasm or noble; using auto`);
  return 'auto';
}

let selected: { current: () => VerifyBackend } | undefined;
const backend = (): VerifyBackend => (selected ??= selectVerifyBackend(choiceFromEnv())).current();

/** Name of the backend in use (loads it if not yet loaded), e.g. for startup logs and benchmarks. */
export function verifyBackendName(): string {
  return backend().name;
}

/** True iff `sig` is a valid ML-DSA-65 signature of `msg` under `pub`. Never throws. */
export function verifySignature(
  pub: Uint8Array,
  msg: Uint8Array,
  sig: Uint8Array,
  context: Uint8Array = TX_SIGNATURE_CONTEXT,
): boolean {
  return backend().verify(pub, msg, sig, context);
}

/** Node's native SHA-256, for verifyTx's hashes (VerifyTxOptions.sha256): several times noble's on a 5 KB transfer. */
export const nativeSha256 = (bytes: Uint8Array): Uint8Array => createHash('sha256').update(bytes).digest();

/** verifyTx with the runtime's signature backend and hash. */
export function verifyTransaction(input: SignedTransaction | Uint8Array | string, network: Network): VerifyTxResult {
  return verifyTx(input, { chainId: network.chainId, hrp: network.hrp, verify: verifySignature, sha256: nativeSha256 });
}
