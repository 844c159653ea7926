import { describe, expect, it } from 'vitest';
import { strictBase64 } from './strict-base64.ts';

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
});
