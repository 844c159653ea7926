import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_ATTEMPTS, RETRY_DELAYS_MS, retryDelayMs } from './schedule.ts';

describe('retry schedule (DESIGN.md §4)', () => {
  it('waits 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h, 24 h, then gives up', () => {
    const mid = (a: number) => retryDelayMs(a, { random: () => 0.5 });
    expect([1, 2, 3, 4, 5, 6, 7, 8, 9].map(mid)).toEqual([5, 300, 1800, 7200, 18000, 36000, 50400, 72000, 86400].map((s) => s * 1000));
    expect(mid(10)).toBeNull();
    expect(mid(0)).toBeNull();
    expect(MAX_ATTEMPTS).toBe(10);
    const total = RETRY_DELAYS_MS.reduce((a, b) => a + b, 0);
    expect(total).toBe(272_105_000); // 3 days 3 h 35 min 5 s: "≈ 3 days"
  });

  it('jitters within ±20 % and scales for tests', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 9 }), fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }), (attempt, r) => {
        const base = RETRY_DELAYS_MS[attempt - 1]!;
        const d = retryDelayMs(attempt, { random: () => r })!;
        expect(d).toBeGreaterThanOrEqual(Math.floor(base * 0.8));
        expect(d).toBeLessThanOrEqual(Math.ceil(base * 1.2));
        expect(retryDelayMs(attempt, { random: () => r, scale: 0.001 })).toBe(Math.round(base * 0.001 * (0.8 + 0.4 * r)));
      }),
    );
  });
});
