/**
 * The WebAssembly ML-DSA-65 backend (PQClean, mldsa65-wasm/) against noble, the oracle:
 * a differential property over random keys, messages and contexts with tampered
 * signatures, messages, contexts and keys, wrong keys and truncated or extended signatures;
 * the chain vectors and the region-by-region tamper suite through verifyTx; and the
 * fallback to noble. Conditions of docs/adr/0003-ml-dsa-backend.md.
 */
import { hexToBytes } from '@noble/hashes/utils.js';
import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import vectors from '../../../test/vectors/chain.json' with { type: 'json' };
import {
  ML_DSA65_PUBLIC_KEY_LENGTH,
  ML_DSA65_SIGNATURE_LENGTH,
  NETWORKS,
  TX_SIGNATURE_CONTEXT,
  decodeSignedTx,
  encodeSignedTxBytes,
  keypairFromSeed,
  mlDsaSign,
  nobleVerify,
  signTx,
  verifyTx,
  type SignatureVerifier,
} from '../../../machines/chain/index.ts';
import { payer, paymentTx } from '../../../machines/chain/fixtures.test-util.ts';
import { WASM_BASE64, WASM_BUILD } from './mldsa65-wasm/binary.gen.ts';
import { WASM_BACKEND_NAME, WasmVerifierError, createWasmVerifier, selfTestWasmVerifier } from './mldsa65-wasm/loader.ts';
import { NOBLE_BACKEND_NAME, nativeSha256, selectVerifyBackend, verifyBackendName, verifySignature } from './verify.ts';

const wasm = createWasmVerifier();
const noble = nobleVerify;
/** Keys that signed nothing in the corpus, for the wrong-key cases. */
const strangers = [keypairFromSeed(new Uint8Array(32).fill(0x11)), keypairFromSeed(new Uint8Array(32).fill(0x22))];

const flipBit = (b: Uint8Array, pos: number, bit: number): Uint8Array => {
  const c = b.slice();
  c[pos % c.length]! ^= 1 << (bit & 7);
  return c;
};
const concat = (a: Uint8Array, b: Uint8Array): Uint8Array => {
  const c = new Uint8Array(a.length + b.length);
  c.set(a);
  c.set(b, a.length);
  return c;
};

/** Both backends must give `want`; labels say which case disagreed. */
function agree(label: string, want: boolean, pk: Uint8Array, msg: Uint8Array, sig: Uint8Array, ctx: Uint8Array): void {
  const n = noble(pk, msg, sig, ctx);
  const w = wasm(pk, msg, sig, ctx);
  expect({ label, noble: n, wasm: w }).toEqual({ label, noble: want, wasm: want });
}

describe('ML-DSA-65 WebAssembly backend (PQClean) agrees with noble', () => {
  it('is the backend in use on this machine', () => {
    expect(verifyBackendName()).toBe(WASM_BACKEND_NAME);
    expect(WASM_BUILD.pqclean).toBe('0.8.1');
  });

  it('differential: random keys, messages and contexts; every tampering rejected by both', () => {
    const HINT_BYTES = 55 + 6; // omega + k: the hint region ends the signature (FIPS 204 sigEncode)
    const CTILDE_BYTES = 48;
    fc.assert(
      fc.property(
        fc.record({
          seed: fc.uint8Array({ minLength: 32, maxLength: 32 }),
          msg: fc.oneof(fc.uint8Array({ maxLength: 64 }), fc.uint8Array({ minLength: 2000, maxLength: 2400 }), fc.uint8Array({ maxLength: 5000 })),
          ctx: fc.oneof(fc.constant(TX_SIGNATURE_CONTEXT), fc.constant(new Uint8Array(0)), fc.uint8Array({ maxLength: 255 })),
          hedge: fc.option(fc.uint8Array({ minLength: 32, maxLength: 32 }), { nil: undefined }),
          pos: fc.array(fc.nat(), { minLength: 6, maxLength: 6 }),
          bit: fc.nat({ max: 7 }),
          cut: fc.integer({ min: 0, max: ML_DSA65_SIGNATURE_LENGTH - 1 }),
          extra: fc.uint8Array({ minLength: 1, maxLength: 8 }),
          stranger: fc.nat({ max: strangers.length - 1 }),
        }),
        ({ seed, msg, ctx, hedge, pos, bit, cut, extra, stranger }) => {
          const [p0 = 0, p1 = 0, p2 = 0, p3 = 0, p4 = 0, p5 = 0] = pos;
          const { publicKey: pk, secretKey: sk } = keypairFromSeed(seed);
          const sig = mlDsaSign(msg, sk, ctx, hedge);
          const hintStart = ML_DSA65_SIGNATURE_LENGTH - HINT_BYTES;
          agree('valid', true, pk, msg, sig, ctx);
          agree('signature bit anywhere', false, pk, msg, flipBit(sig, p0, bit), ctx);
          agree('signature bit in c~', false, pk, msg, flipBit(sig, p1 % CTILDE_BYTES, bit), ctx);
          agree('signature bit in hints', false, pk, msg, flipBit(sig, hintStart + (p2 % HINT_BYTES), bit), ctx);
          agree('message tampered', false, pk, msg.length > 0 ? flipBit(msg, p3, bit) : extra, sig, ctx);
          agree('message extended', false, pk, concat(msg, extra), sig, ctx);
          if (msg.length > 0) agree('message truncated', false, pk, msg.subarray(0, msg.length - 1), sig, ctx);
          agree('context tampered', false, pk, msg, sig, ctx.length > 0 ? flipBit(ctx, p4, bit) : extra);
          if (ctx.length + extra.length <= 255) agree('context extended', false, pk, msg, sig, concat(ctx, extra));
          agree('context over 255 bytes', false, pk, msg, sig, new Uint8Array(256));
          agree('public key bit', false, flipBit(pk, p5, bit), msg, sig, ctx);
          agree('wrong key', false, strangers[stranger]!.publicKey, msg, sig, ctx);
          agree('truncated signature', false, pk, msg, sig.subarray(0, cut), ctx);
          agree('extended signature', false, pk, msg, concat(sig, extra), ctx);
          agree('truncated public key', false, pk.subarray(0, ML_DSA65_PUBLIC_KEY_LENGTH - 1), msg, sig, ctx);
        },
      ),
      { numRuns: 32 },
    );
  });

  it('differential: many single-bit and random-byte changes of one signature (hint and z decoding)', () => {
    const { publicKey: pk, secretKey: sk } = strangers[0]!;
    const msg = new TextEncoder().encode('one signature, many tamperings');
    const sig = mlDsaSign(msg, sk, TX_SIGNATURE_CONTEXT);
    agree('valid', true, pk, msg, sig, TX_SIGNATURE_CONTEXT);
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: ML_DSA65_SIGNATURE_LENGTH - 1 }),
        fc.integer({ min: 1, max: 255 }),
        fc.boolean(),
        (i, x, tail) => {
          // half the runs aim at the last 200 bytes: the end of z and the hint encoding
          const at = tail ? ML_DSA65_SIGNATURE_LENGTH - 1 - (i % 200) : i;
          const t = sig.slice();
          t[at]! ^= x;
          agree(`byte ${at} ^ ${x}`, false, pk, msg, t, TX_SIGNATURE_CONTEXT);
        },
      ),
      { numRuns: 200 },
    );
    // Signature- and key-sized random bytes: nothing verifies, and neither backend throws.
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: ML_DSA65_SIGNATURE_LENGTH, maxLength: ML_DSA65_SIGNATURE_LENGTH }),
        fc.uint8Array({ minLength: ML_DSA65_PUBLIC_KEY_LENGTH, maxLength: ML_DSA65_PUBLIC_KEY_LENGTH }),
        (rs, rpk) => {
          agree('random signature', false, pk, msg, rs, TX_SIGNATURE_CONTEXT);
          agree('random key', false, rpk, msg, sig, TX_SIGNATURE_CONTEXT);
        },
      ),
      { numRuns: 40 },
    );
  });

  it('accepts the chain vectors (test/vectors/chain.json) and verifyTx gives the same result', () => {
    for (const v of vectors.transactions) {
      const network = NETWORKS[v.network as keyof typeof NETWORKS];
      const s = decodeSignedTx(v.signed_tx);
      agree(v.name, true, s.from_public_key, hexToBytes(v.signing_bytes), s.signature, TX_SIGNATURE_CONTEXT);
      const r = verifyTx(v.signed_tx, { ...network, verify: wasm });
      expect(r.ok && { hash: r.hash, from: r.from }).toEqual({ hash: v.tx_hash, from: v.from });
      // The runtime's native SHA-256 gives the vectors' hash and sender too.
      const n = verifyTx(v.signed_tx, { ...network, verify: wasm, sha256: nativeSha256 });
      expect(n.ok && { hash: n.hash, from: n.from }).toEqual({ hash: v.tx_hash, from: v.from });
    }
  });

  it('refuses every tampered byte of a signed transaction with the code a rejecting verifier gives', () => {
    // machines/chain/verify.test.ts runs this region suite with noble; here the same signed
    // transaction with every 3rd byte changed goes through verifyTx with the WebAssembly
    // backend, and must fail with exactly the error of a verifier that rejects everything.
    const live = NETWORKS.live;
    const bytes = encodeSignedTxBytes(signTx(paymentTx(), payer.secretKey));
    const code = (r: ReturnType<typeof verifyTx>): string => (r.ok ? 'ok' : r.error.code);
    expect(code(verifyTx(bytes, { ...live, verify: wasm }))).toBe('ok');
    let checked = 0;
    for (let i = 0; i < bytes.length; i += 3) {
      const t = bytes.slice();
      t[i]! ^= 0x01;
      const got = code(verifyTx(t, { ...live, verify: wasm }));
      expect(got, `byte ${i}`).not.toBe('ok');
      expect(got, `byte ${i}`).toBe(code(verifyTx(t, { ...live, verify: () => false })));
      checked++;
    }
    expect(checked).toBeGreaterThan(1500);
  });

  it('handles messages larger than its kept buffer, and malformed lengths, like noble', () => {
    const { publicKey: pk, secretKey: sk } = strangers[1]!;
    for (const size of [0, 4096, 4097, 70_000, (1 << 20) + 1]) {
      const msg = new Uint8Array(size).fill(size & 0xff);
      const sig = mlDsaSign(msg, sk, TX_SIGNATURE_CONTEXT);
      agree(`valid, ${size}-byte message`, true, pk, msg, sig, TX_SIGNATURE_CONTEXT);
      agree(`tampered, ${size}-byte message`, false, pk, concat(msg, new Uint8Array(1)), sig, TX_SIGNATURE_CONTEXT);
    }
    agree('empty signature and key', false, new Uint8Array(0), new Uint8Array(0), new Uint8Array(0), TX_SIGNATURE_CONTEXT);
    expect(verifySignature(new Uint8Array(3), new Uint8Array(1), new Uint8Array(2))).toBe(false);
  });
});

describe('fallback to noble', () => {
  const { publicKey: pk, secretKey: sk } = strangers[0]!;
  const msg = new Uint8Array([1, 2, 3]);
  const sig = mlDsaSign(msg, sk, TX_SIGNATURE_CONTEXT);

  it('uses noble and says why when the WebAssembly backend fails to load', () => {
    const why: string[] = [];
    const sel = selectVerifyBackend('auto', () => { throw new WasmVerifierError('no module'); }, (w) => why.push(w));
    expect(sel.current().name).toBe(`${NOBLE_BACKEND_NAME} (fallback: WebAssembly backend failed to load: no module)`);
    expect(sel.current().verify(pk, msg, sig, TX_SIGNATURE_CONTEXT)).toBe(true);
    expect(sel.current().verify(pk, msg.subarray(1), sig, TX_SIGNATURE_CONTEXT)).toBe(false);
    expect(why).toHaveLength(1);
  });

  it('switches to noble for good when the backend throws at run time, without throwing itself', () => {
    const why: string[] = [];
    const broken = vi.fn<SignatureVerifier>(() => { throw new WasmVerifierError('module called exit(111)'); });
    const sel = selectVerifyBackend('auto', () => broken, (w) => why.push(w));
    expect(sel.current().name).toBe(WASM_BACKEND_NAME);
    expect(sel.current().verify(pk, msg, sig, TX_SIGNATURE_CONTEXT)).toBe(true);
    expect(sel.current().name).toMatch(/^noble-post-quantum \(fallback: WebAssembly backend failed at run time: module called exit\(111\)\)$/);
    expect(sel.current().verify(pk, msg, sig, TX_SIGNATURE_CONTEXT)).toBe(true);
    expect(broken).toHaveBeenCalledTimes(1);
    expect(why).toHaveLength(1);
  });

  it('is forced by ANM_VERIFY_BACKEND=noble', async () => {
    expect(selectVerifyBackend('noble', () => wasm).current().name).toBe(NOBLE_BACKEND_NAME);
    vi.stubEnv('ANM_VERIFY_BACKEND', 'noble');
    vi.resetModules();
    try {
      const fresh = await import('./verify.ts');
      expect(fresh.verifyBackendName()).toBe(NOBLE_BACKEND_NAME);
      expect(fresh.verifySignature(pk, msg, sig)).toBe(true);
    } finally {
      vi.unstubAllEnvs();
    }
  });

  it('does not trust a module that fails its self-test or whose bytes were changed', () => {
    expect(() => selfTestWasmVerifier(() => true)).toThrow(/self-test failed: signature bit flipped/);
    expect(() => selfTestWasmVerifier(() => false)).toThrow(/self-test failed: valid signature/);
    const bytes = Buffer.from(createWasmBytes());
    bytes[bytes.length - 1]! ^= 1;
    expect(() => createWasmVerifier(bytes)).toThrow(/sha256/);
    const sel = selectVerifyBackend('auto', () => createWasmVerifier(bytes), () => {});
    expect(sel.current().name).toMatch(/^noble-post-quantum \(fallback: WebAssembly backend failed to load: module sha256 /);
  });
});

function createWasmBytes(): Uint8Array<ArrayBuffer> {
  // the committed module, decoded the way the loader does
  return new Uint8Array(Buffer.from(WASM_BASE64, 'base64'));
}
