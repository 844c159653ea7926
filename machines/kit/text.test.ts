import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { codePoints, withArticle } from './text.ts';

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

// Messages name statuses and ranges after an article: "An OPEN invoice", not "A OPEN invoice".
describe('withArticle', () => {
  it.each<[string, boolean, string]>([
    ['OPEN', true, 'An OPEN'],
    ['UNCOLLECTIBLE', true, 'An UNCOLLECTIBLE'],
    ['DRAFT', true, 'A DRAFT'],
    ['VOID', true, 'A VOID'],
    ['PAID', false, 'a PAID'],
    ['EXPIRED', false, 'an EXPIRED'],
    ['unspecified', false, 'an unspecified'],
    ['loopback', false, 'a loopback'],
    ['uniqueLocal', false, 'a uniqueLocal'],
    ['ipv4Mapped', false, 'an ipv4Mapped'],
  ])('%s (sentence start %s) → %s', (word, sentenceStart, want) => {
    expect(withArticle(word, { sentenceStart })).toBe(want);
  });
});
