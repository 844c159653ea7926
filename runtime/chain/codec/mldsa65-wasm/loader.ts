/**
 * Loads the ML-DSA-65 verification WebAssembly module (PQClean "clean", built by build.ts
 * beside this file) and wraps its FIPS 204 `verify_ctx` as a SignatureVerifier. Used only by
 * runtime/chain/codec/verify.ts (which falls back to noble when this throws) and by tests and
 * benchmarks that compare it with noble. See docs/adr/0003-ml-dsa-backend.md.
 */
import { TerminalError } from '../../../errors.ts';
import { createHash } from 'node:crypto';
import {
  ML_DSA65_PUBLIC_KEY_LENGTH,
  ML_DSA65_SIGNATURE_LENGTH,
  TX_SIGNATURE_CONTEXT,
  keypairFromSeed,
  mlDsaSign,
  type SignatureVerifier,
} from '../../../../machines/chain/index.ts';
import { WASM_BASE64, WASM_BUILD, WASM_SHA256 } from './binary.gen.ts';

/** FIPS 204: a context string is at most 255 bytes. */
const MAX_CONTEXT_LENGTH = 255;
/** Messages up to this size reuse one buffer inside the module; larger ones get a temporary one. */
const KEPT_MESSAGE_BUFFER_MAX = 1 << 20;

export const WASM_BACKEND_NAME = `pqclean-wasm (PQClean ML-DSA-65 clean, pqclean@${WASM_BUILD.pqclean})`;

interface ModuleExports {
  memory: WebAssembly.Memory;
  malloc: (size: number) => number;
  free: (ptr: number) => void;
  PQCLEAN_MLDSA65_CLEAN_crypto_sign_verify_ctx: (
    sig: number, siglen: number, m: number, mlen: number, ctx: number, ctxlen: number, pk: number,
  ) => number;
}

export class WasmVerifierError extends TerminalError {
  constructor(message: string) {
    super('wasm_verifier', message);
  }
}

function instantiate(bytes: Uint8Array<ArrayBuffer>): ModuleExports {
  const digest = createHash('sha256').update(bytes).digest('hex');
  if (digest !== WASM_SHA256) throw new WasmVerifierError(`module sha256 ${digest} is not the built ${WASM_SHA256}`);
  const module = new WebAssembly.Module(bytes);
  const instance = new WebAssembly.Instance(module, {
    // Reached only if malloc fails inside the module (PQClean's SHAKE context allocation).
    wasi_snapshot_preview1: {
      proc_exit(code: number): never {
        throw new WasmVerifierError(`module called exit(${code})`);
      },
    },
  });
  const e = instance.exports as Partial<ModuleExports>;
  if (!(e.memory instanceof WebAssembly.Memory) || typeof e.malloc !== 'function' || typeof e.free !== 'function'
    || typeof e.PQCLEAN_MLDSA65_CLEAN_crypto_sign_verify_ctx !== 'function') {
    throw new WasmVerifierError('module does not export memory, malloc, free and verify_ctx');
  }
  return e as ModuleExports;
}

/**
 * A fresh module instance wrapped as a verifier. Returns false for malformed input (wrong
 * key or signature length, context over 255 bytes), like nobleVerify. Throws only if the
 * module itself fails (out of memory inside it): the caller then stops using it.
 */
export function createWasmVerifier(bytes: Uint8Array<ArrayBuffer> = Buffer.from(WASM_BASE64, 'base64')): SignatureVerifier {
  const x = instantiate(bytes);
  const alloc = (size: number): number => {
    const p = x.malloc(size);
    if (p === 0) throw new WasmVerifierError(`module malloc(${size}) failed`);
    return p;
  };
  const pkPtr = alloc(ML_DSA65_PUBLIC_KEY_LENGTH);
  const sigPtr = alloc(ML_DSA65_SIGNATURE_LENGTH);
  const ctxPtr = alloc(MAX_CONTEXT_LENGTH);
  let msgCap = 4096;
  let msgPtr = alloc(msgCap);
  let heap = new Uint8Array(x.memory.buffer);
  const view = (): Uint8Array => (heap.buffer === x.memory.buffer ? heap : (heap = new Uint8Array(x.memory.buffer)));

  return (publicKey, message, signature, context) => {
    if (publicKey.length !== ML_DSA65_PUBLIC_KEY_LENGTH) return false;
    if (signature.length !== ML_DSA65_SIGNATURE_LENGTH) return false;
    if (context.length > MAX_CONTEXT_LENGTH) return false;
    let mPtr = msgPtr;
    let temporary = false;
    if (message.length > msgCap) {
      if (message.length <= KEPT_MESSAGE_BUFFER_MAX) {
        const cap = Math.min(KEPT_MESSAGE_BUFFER_MAX, 2 ** Math.ceil(Math.log2(message.length)));
        const p = alloc(cap);
        x.free(msgPtr);
        msgPtr = mPtr = p;
        msgCap = cap;
      } else {
        mPtr = alloc(message.length);
        temporary = true;
      }
    }
    try {
      const h = view(); // after any malloc: growing the module's memory replaces its buffer
      h.set(publicKey, pkPtr);
      h.set(signature, sigPtr);
      h.set(context, ctxPtr);
      h.set(message, mPtr);
      return x.PQCLEAN_MLDSA65_CLEAN_crypto_sign_verify_ctx(
        sigPtr, signature.length, mPtr, message.length, ctxPtr, context.length, pkPtr,
      ) === 0;
    } finally {
      if (temporary) x.free(mPtr);
    }
  };
}

/**
 * Known-answer self-test before the module is trusted: a noble-made signature must verify
 * and the same signature must fail after one changed bit in the signature, the message, the
 * context or the key. Throws WasmVerifierError on any disagreement.
 */
export function selfTestWasmVerifier(verify: SignatureVerifier): void {
  const { publicKey, secretKey } = keypairFromSeed(new Uint8Array(32).fill(0xa5));
  const msg = new TextEncoder().encode('ANM ML-DSA-65 wasm backend self-test');
  const sig = mlDsaSign(msg, secretKey, TX_SIGNATURE_CONTEXT);
  const flip = (b: Uint8Array, i: number): Uint8Array => {
    const c = b.slice();
    c[i % c.length]! ^= 1;
    return c;
  };
  const cases: [string, boolean, boolean][] = [
    ['valid signature', verify(publicKey, msg, sig, TX_SIGNATURE_CONTEXT), true],
    ['signature bit flipped', verify(publicKey, msg, flip(sig, 100), TX_SIGNATURE_CONTEXT), false],
    ['message bit flipped', verify(publicKey, flip(msg, 3), sig, TX_SIGNATURE_CONTEXT), false],
    ['context bit flipped', verify(publicKey, msg, sig, flip(TX_SIGNATURE_CONTEXT, 0)), false],
    ['empty context', verify(publicKey, msg, sig, new Uint8Array(0)), false],
    ['public key bit flipped', verify(flip(publicKey, 40), msg, sig, TX_SIGNATURE_CONTEXT), false],
  ];
  for (const [what, got, want] of cases) {
    if (got !== want) throw new WasmVerifierError(`self-test failed: ${what} gave ${got}`);
  }
}

/** The verifier the runtime uses: fresh instance, self-tested. Throws if either step fails. */
export function loadWasmVerifier(): SignatureVerifier {
  const verify = createWasmVerifier();
  selfTestWasmVerifier(verify);
  return verify;
}
