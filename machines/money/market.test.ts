import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MARKET_ASSETS, MARKET_FEE_BPS, assertGross, formatAtomic, marketFee, maxSellerPrice, maxPriceAccepted, parseAtomic, parseAtomicDecimal, parseCeiling, priceSplit, type MarketAsset } from './market.ts';

const ASSETS: MarketAsset[] = ['USDC', 'ANM'];
/** Any seller price the asset can carry, with the edges (1 unit, the largest) drawn often. */
const sellerOf = (asset: MarketAsset) => {
  const max = maxSellerPrice(asset);
  return fc.oneof(fc.constantFrom(1n, 2n, 199n, 200n, 201n, max - 1n, max), fc.bigInt(1n, max), fc.bigInt(1n, 1_000_000_000n));
};
const anyCase = fc.constantFrom(...ASSETS).chain((asset) => fc.tuple(fc.constant(asset), sellerOf(asset)));

// marketplace.md "Fee rule": fee | 50 bps of the seller price, rounded up to one atomic unit.
describe('marketplace fee (marketplace.md "Fee rule", "Limits")', () => {
  it('fee_bps is 50 and the edges are as the rule says', () => {
    expect(MARKET_FEE_BPS).toBe(50);
    expect(marketFee(1n)).toBe(1n);
    expect(marketFee(200n)).toBe(1n);
    expect(marketFee(201n)).toBe(2n);
    expect(marketFee(1_000_000n)).toBe(5_000n);
    expect(marketFee(1_000_001n)).toBe(5_001n);
    expect(() => marketFee(0n)).toThrow(RangeError);
  });

  it('fee is ceil(seller × 50 / 10000), at least one atomic unit', () => {
    fc.assert(
      fc.property(anyCase, ([, seller]) => {
        const fee = marketFee(seller);
        const exact = (fee - 1n) * 10_000n < seller * 50n && seller * 50n <= fee * 10_000n;
        return fee >= 1n && (exact || (fee === 1n && seller * 50n <= 10_000n));
      }),
      { numRuns: 2000 },
    );
  });

  // "buyer pays | seller price + fee"; "seller receives | the advertised seller price"; "gross = seller + fee".
  it('total = seller + fee, and the total fits the asset over the whole range', () => {
    fc.assert(
      fc.property(anyCase, ([asset, seller]) => {
        const s = priceSplit(asset, seller);
        assertGross(s.total, s.seller, s.fee);
        return s.seller === seller && s.total === seller + s.fee && s.total <= MARKET_ASSETS[asset].maxAtomic;
      }),
      { numRuns: 2000 },
    );
  });

  it('the largest representable seller price is the last whose total fits', () => {
    for (const asset of ASSETS) {
      const max = maxSellerPrice(asset);
      expect(priceSplit(asset, max).total).toBeLessThanOrEqual(MARKET_ASSETS[asset].maxAtomic);
      expect(() => priceSplit(asset, max + 1n)).toThrow(RangeError);
    }
  });

  it('assertGross refuses any other gross', () => {
    fc.assert(
      fc.property(anyCase, fc.bigInt(-5n, 5n).filter((d) => d !== 0n), ([asset, seller], delta) => {
        const s = priceSplit(asset, seller);
        expect(() => assertGross(s.total + delta, s.seller, s.fee)).toThrow(RangeError);
      }),
    );
  });
});

// marketplace.md "Limits": listing price precision, 6 decimal places in decimal strings (USDC; ANM keeps 9).
describe('decimal strings', () => {
  it('examples', () => {
    expect(formatAtomic('USDC', 1n)).toBe('0.000001');
    expect(formatAtomic('USDC', 1_500_000n)).toBe('1.500000');
    expect(formatAtomic('ANM', 1n)).toBe('0.000000001');
    expect(parseAtomicDecimal('USDC', '0.01')).toBe(10_000n);
    expect(parseAtomicDecimal('USDC', '0.0000001')).toBeNull();
    expect(parseAtomicDecimal('USDC', '0')).toBeNull();
    expect(parseAtomicDecimal('USDC', '-1')).toBeNull();
    expect(parseAtomicDecimal('USDC', '1e3')).toBeNull();
    expect(parseAtomicDecimal('ANM', '18446744073.709551616')).toBeNull();
    expect(parseAtomic('USDC', '007')).toBeNull();
  });

  it('format and parse round trip over the whole range', () => {
    fc.assert(
      fc.property(anyCase, ([asset, n]) => {
        const s = formatAtomic(asset, n);
        const places = s.split('.')[1]?.length;
        return places === MARKET_ASSETS[asset].decimals && parseAtomicDecimal(asset, s) === n && parseAtomic(asset, n.toString()) === n;
      }),
      { numRuns: 2000 },
    );
  });
});

// marketplace.md "Limits": "max_price is a ceiling on the total price"; with no asset named
// it is a value, compared in each asset's units (places beyond an asset's floored away).
describe('max_price as a ceiling by value (marketplace.md "max_price is a ceiling on the total price")', () => {
  const ANM_MAX = MARKET_ASSETS.ANM.maxAtomic;
  it.each<[string, bigint | null, bigint | null]>([
    ['1', 1_000_000n, 1_000_000_000n],
    ['1.000000', 1_000_000n, 1_000_000_000n],
    ['1.000000000', 1_000_000n, 1_000_000_000n],
    ['1.0000001', 1_000_000n, 1_000_000_100n],
    ['1.000000999', 1_000_000n, 1_000_000_999n],
    ['0.999999999', 999_999n, 999_999_999n],
    ['0.000001', 1n, 1_000n],
    ['0.0000009', 0n, 900n],
    ['0.000000001', 0n, 1n],
    ['18446744073.709551615', 18_446_744_073_709_551n, ANM_MAX],
    ['18446744073.709551616', 18_446_744_073_709_551n, ANM_MAX],
    ['99999999999999999999', 99_999_999_999_999_999_999_000_000n, ANM_MAX],
    ['1.0000000001', null, null],
    ['0', null, null],
    ['0.000000000', null, null],
    ['-1', null, null],
    ['1e3', null, null],
    ['.5', null, null],
  ])('%s → USDC %s, ANM %s', (s, usdc, anm) => {
    expect([parseCeiling('USDC', s), parseCeiling('ANM', s)]).toEqual([usdc, anm]);
  });

  it.each<[MarketAsset | undefined, string, boolean]>([
    [undefined, '1.000000000', true],
    [undefined, '1.0000001', true],
    [undefined, '0.0000001', true],
    [undefined, '1.0000000001', false],
    [undefined, '0', false],
    ['USDC', '1.000000', true],
    ['USDC', '1.0000001', false],
    ['USDC', '1.000000000', false],
    ['ANM', '1.000000001', true],
    ['ANM', '1.0000000001', false],
  ])('asset %s, max_price %s: accepted %s (an asset named keeps its own places)', (asset, s, ok) => {
    expect(maxPriceAccepted(asset, s)).toBe(ok);
  });

  it('a total is under the floored ceiling exactly when it is under the ceiling by value', () => {
    fc.assert(
      fc.property(fc.constantFrom(...ASSETS), fc.bigInt(1n, 10n ** 12n), fc.bigInt(1n, 10n ** 15n), (asset, total, nano) => {
        const ceiling = `${nano / 1_000_000_000n}.${(nano % 1_000_000_000n).toString().padStart(9, '0')}`;
        const scale = 10n ** BigInt(9 - MARKET_ASSETS[asset].decimals);
        return (total <= parseCeiling(asset, ceiling)!) === (total * scale <= nano);
      }),
      { numRuns: 1000 },
    );
  });
});
