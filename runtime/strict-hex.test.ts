import { hexToBytes } from '@noble/hashes/utils.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { strictLowerHex } from './strict-hex.ts';

/** The check this one replaced: a lowercase pattern, then noble's decoder. */
function reference(s: string): Uint8Array | null {
  return /^[0-9a-f]*$/.test(s) && s.length % 2 === 0 ? hexToBytes(s) : null;
}
const same = (s: string) => {
  const got = strictLowerHex(s);
  const want = reference(s);
  expect(got === null ? null : Array.from(got), JSON.stringify(s)).toEqual(want === null ? null : Array.from(want));
};

describe('strictLowerHex: lowercase, even-length hex only', () => {
  it.each([
    ['uppercase digits', 'AB'],
    ['mixed case', '0aB1'],
    ['an odd length', 'abc'],
    ['0x', '0xab'],
    ['a stray character after a readable pair', 'abzz'],
    ['a stray character first', 'zzab'],
    ['whitespace', 'ab cd'],
    ['a trailing newline', 'abcd\n'],
    ['a non-ASCII lookalike', 'ab\u0661\u0662'],
  ])('refuses %s', (_name, text) => {
    expect(strictLowerHex(text)).toBeNull();
    same(text);
  });

  it('reads a signed transfer’s length and the empty text, into bytes of their own', () => {
    const hex = Buffer.from(Array.from({ length: 5_300 }, (_, i) => (i * 7) & 0xff)).toString('hex');
    const long = strictLowerHex(hex)!;
    expect(Buffer.from(long).toString('hex')).toBe(hex);
    // A plain Uint8Array, not a Buffer: slice() copies (the decoded key and signature own their bytes).
    expect(Buffer.isBuffer(long)).toBe(false);
    expect(Array.from(strictLowerHex('')!)).toEqual([]);
    const short = strictLowerHex('00ff')!;
    expect(short.buffer.byteLength).toBe(2);
  });

  it('agrees with the pattern and noble on any text, hex-like or not', () => {
    const hexChar = fc.constantFrom(...'0123456789abcdefABCDEFxz \u0661'.split(''));
    fc.assert(fc.property(fc.oneof(fc.string(), fc.string({ unit: hexChar, maxLength: 64 })), same), { numRuns: 2_000 });
  });
});
