import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex } from '@noble/hashes/utils.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { U64_MAX } from './bytes.ts';
import { TxError, type TxErrorCode } from './errors.ts';
import { paymentTx } from './fixtures.test-util.ts';
import {
  TX_MAGIC,
  decodeSignedTx,
  decodeSignedTxBytes,
  encodeSignedTx,
  encodeSignedTxBytes,
  signingBytes,
  txHash,
  type SignedTransaction,
} from './tx.ts';

const ascii = (max: number) =>
  fc.string({ unit: fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength: max });

const arbSignedTx: fc.Arbitrary<SignedTransaction> = fc.record({
  chain_id: fc.integer({ min: 0, max: 0xffff_ffff }),
  from_public_key: fc.uint8Array({ maxLength: 2000 }),
  nonce: fc.bigInt({ min: 0n, max: U64_MAX }),
  outputs: fc.array(fc.record({ to: ascii(255), amount: fc.bigInt({ min: 0n, max: U64_MAX }) }), { maxLength: 8 }),
  reference: ascii(255),
  fee: fc.bigInt({ min: 0n, max: U64_MAX }),
  signature: fc.uint8Array({ maxLength: 3400 }),
});

function codeOf(fn: () => unknown): TxErrorCode | 'no error' {
  try {
    fn();
    return 'no error';
  } catch (e) {
    if (e instanceof TxError) return e.code;
    throw e;
  }
}

describe('transaction encoding (docs/chain.md "Signing bytes")', () => {
  it('round-trips any transaction through bytes and hex', () => {
    fc.assert(
      fc.property(arbSignedTx, (tx) => {
        const bytes = encodeSignedTxBytes(tx);
        expect(decodeSignedTxBytes(bytes)).toEqual(tx);
        const hex = encodeSignedTx(tx);
        expect(hex).toBe(bytesToHex(bytes));
        expect(decodeSignedTx(hex)).toEqual(tx);
        expect(decodeSignedTx(hex.toUpperCase())).toEqual(tx);
        expect(txHash(tx)).toBe(bytesToHex(sha256(bytes)));
        expect(txHash(bytes)).toBe(txHash(tx));
        // signed bytes = signing bytes ‖ u16 length ‖ signature
        const sb = signingBytes(tx);
        expect(bytes.subarray(0, sb.length)).toEqual(sb);
        expect((bytes[sb.length]! << 8) | bytes[sb.length + 1]!).toBe(tx.signature.length);
      }),
      { numRuns: 200 },
    );
  });

  it('exposes nonce as a bigint for the devnet replay check', () => {
    const tx = { ...paymentTx({ nonce: U64_MAX }), signature: new Uint8Array(3) };
    expect(decodeSignedTx(encodeSignedTx(tx)).nonce).toBe(U64_MAX);
  });

  it('starts with the ASCII domain-separation prefix', () => {
    expect(new TextDecoder().decode(signingBytes(paymentTx()).subarray(0, 9))).toBe(TX_MAGIC);
  });

  it('refuses every truncation and any trailing byte as malformed', () => {
    fc.assert(
      fc.property(arbSignedTx, fc.nat(), (tx, cut) => {
        const bytes = encodeSignedTxBytes(tx);
        expect(codeOf(() => decodeSignedTxBytes(bytes.subarray(0, cut % bytes.length)))).toBe('malformed');
        const longer = new Uint8Array(bytes.length + 1);
        longer.set(bytes);
        expect(codeOf(() => decodeSignedTxBytes(longer))).toBe('malformed');
      }),
      { numRuns: 200 },
    );
  });

  it('refuses bad hex, a wrong prefix and non-ASCII strings as malformed', () => {
    const hex = encodeSignedTx({ ...paymentTx(), signature: new Uint8Array(4) });
    for (const bad of ['0x' + hex, hex.slice(1), hex + 'zz', '']) expect(codeOf(() => decodeSignedTx(bad))).toBe('malformed');
    const bytes = encodeSignedTxBytes({ ...paymentTx(), signature: new Uint8Array(4) });
    const wrongMagic = bytes.slice();
    wrongMagic[8] = 0x32; // ANM-TX-v2
    expect(codeOf(() => decodeSignedTxBytes(wrongMagic))).toBe('malformed');
    const refStart = bytes.length - 2 - 4 - 8 - 36;
    const nonAscii = bytes.slice();
    nonAscii[refStart] = 0xc3;
    expect(codeOf(() => decodeSignedTxBytes(nonAscii))).toBe('malformed');
  });

  it('refuses values that do not fit the fixed-width fields', () => {
    expect(codeOf(() => signingBytes(paymentTx({ fee: U64_MAX + 1n })))).toBe('amount_out_of_range');
    expect(codeOf(() => signingBytes(paymentTx({ fee: -1n })))).toBe('amount_out_of_range');
    expect(codeOf(() => signingBytes(paymentTx({ outputs: [{ to: 'x', amount: -5n }] })))).toBe('amount_out_of_range');
    expect(codeOf(() => signingBytes(paymentTx({ nonce: -1n })))).toBe('malformed');
    expect(codeOf(() => signingBytes(paymentTx({ chain_id: 2 ** 32 })))).toBe('malformed');
    expect(codeOf(() => signingBytes(paymentTx({ chain_id: 1.5 })))).toBe('malformed');
    expect(codeOf(() => signingBytes(paymentTx({ reference: 'é' })))).toBe('bad_reference');
    expect(codeOf(() => signingBytes(paymentTx({ reference: 'x'.repeat(256) })))).toBe('bad_reference');
    expect(codeOf(() => signingBytes(paymentTx({ outputs: [{ to: 'a b', amount: 1n }] })))).toBe('bad_address');
    expect(codeOf(() => signingBytes(paymentTx({ from_public_key: new Uint8Array(65536) })))).toBe('bad_public_key');
  });
});
