import { base64, base64urlnopad } from '@scure/base';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { strictBase64 } from './strict-base64.ts';

/** The decoder this one replaced: @scure/base's, which refuses every non-canonical spelling. */
function scureBase64(s: string): Uint8Array | null {
  try {
    return /^[A-Za-z0-9_-]*$/.test(s) ? base64urlnopad.decode(s) : base64.decode(s);
  } catch {
    return null;
  }
}
const same = (s: string) => {
  const got = strictBase64(s);
  const want = scureBase64(s);
  expect(got === null ? null : Array.from(got), JSON.stringify(s)).toEqual(want === null ? null : Array.from(want));
};

const bytes = Buffer.from([0xfb, 0xff, 0x41]);

describe('strictBase64: one spelling per value', () => {
  it.each([
    ['padded base64', bytes.toString('base64')],
    ['unpadded base64url', bytes.toString('base64url')],
    ['padded one-byte value', 'QQ=='],
    ['unpadded one-byte value, url alphabet', 'QQ'],
  ])('reads %s', (_name, text) => {
    expect(strictBase64(text)).not.toBeNull();
  });

  it.each([
    ['stray bits in the last character (QR== is QQ== with a set padding bit)', 'QR=='],
    ['stray bits, url alphabet', 'QR'],
    ['a character Node would skip', 'Q*Q=='],
    ['whitespace inside', 'QQ ==' ],
    ['a trailing newline', 'QQ==\n'],
    ['padding too short', 'QQ='],
    ['padding too long', 'QQ==='],
    ['padding on base64url', '-_8='],
    ['both alphabets in one value', '+_8A'],
    ['a missing character (standard alphabet, no padding)', '+/8'],
  ])('refuses %s', (_name, text) => {
    expect(strictBase64(text)).toBeNull();
  });

  it('decodes to what Node encodes', () => {
    expect(Buffer.from(strictBase64(bytes.toString('base64'))!)).toEqual(bytes);
    expect(Buffer.from(strictBase64(bytes.toString('base64url'))!)).toEqual(bytes);
  });

  it('reads and refuses exactly what the @scure/base decoder does', () => {
    const canonical = fc.uint8Array({ maxLength: 40 }).chain((b) => fc.constantFrom(Buffer.from(b).toString('base64'), Buffer.from(b).toString('base64url')));
    // Canonical texts with one character changed, dropped or added, and short texts over an
    // alphabet mixing both alphabets, padding, whitespace and characters Node skips.
    const edited = fc.tuple(canonical, fc.nat(), fc.constantFrom('A', 'B', 'Q', 'R', 'g', 'w', '+', '/', '-', '_', '=', ' ', '\n', '*', ''), fc.boolean()).map(([t, i, c, replace]) => {
      const at = i % (t.length + 1);
      return t.slice(0, at) + c + t.slice(replace ? at + 1 : at);
    });
    const short = fc.array(fc.constantFrom('A', 'Q', 'R', 'g', '8', '+', '/', '-', '_', '=', ' ', '*'), { maxLength: 9 }).map((cs) => cs.join(''));
    fc.assert(fc.property(fc.oneof(canonical, edited, short), same), { numRuns: 5_000 });
  });

  it('returns a plain Uint8Array', () => {
    expect(strictBase64('QQ==')?.constructor).toBe(Uint8Array);
  });
});
