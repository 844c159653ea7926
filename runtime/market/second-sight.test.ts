/**
 * Admission on second sight (ADR 0065): a key is reported seen only after it was asked about,
 * until a newer key takes its slot; the table's size is a power of two.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SecondSight } from './second-sight.ts';

describe('SecondSight', () => {
  it('a key is new the first time and seen the second, text outside ASCII and the empty string included', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 80 }), (key) => {
        const sight = new SecondSight(1024);
        expect(sight.seenBefore(key)).toBe(false);
        expect(sight.seenBefore(key)).toBe(true);
        expect(sight.seenBefore(key)).toBe(true);
      }),
    );
  });

  it('keys that differ in their last characters spread over the slots; a key is forgotten once many newer ones have come', () => {
    // 500 keys in 65,536 slots: about two share a slot if the fingerprints spread.
    const sight = new SecondSight(65_536);
    const keys = Array.from({ length: 500 }, (_, i) => `/api/v1/search?capability=weather+p${i}`);
    for (const k of keys) sight.seenBefore(k);
    expect(keys.filter((k) => sight.seenBefore(k)).length).toBeGreaterThan(490);
    for (let i = 0; i < 1_000_000; i++) sight.seenBefore(`other ${i}`);
    expect(keys.filter((k) => sight.seenBefore(k)).length).toBeLessThan(50);
  });

  it('takes only a power of two', () => {
    expect(() => new SecondSight(1000)).toThrow(/power of two/);
    expect(() => new SecondSight(0)).toThrow(/power of two/);
  });
});
