import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { codePoints } from './text.ts';

describe('codePoints', () => {
  it('counts an astral character once and a lone surrogate once', () => {
    expect(codePoints('')).toBe(0);
    expect(codePoints('abc')).toBe(3);
    expect(codePoints('😀'.repeat(251))).toBe(251);
    expect(codePoints('a😀b')).toBe(3);
    expect(codePoints('\uD800')).toBe(1);
    expect(codePoints('\uDC00\uD800')).toBe(2);
  });

  it('agrees with the string iterator on any string', () => {
    fc.assert(fc.property(fc.string({ unit: 'binary' }), (s) => codePoints(s) === [...s].length));
    fc.assert(fc.property(fc.string({ unit: fc.integer({ min: 0xd7f0, max: 0xe010 }).map((c) => String.fromCharCode(c)) }), (s) => codePoints(s) === [...s].length));
  });
});
