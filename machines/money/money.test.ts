import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FEE_BPS, fiatToNanm, formatAnm, nanm, parseAnmFormatted, parseDecimalAmount, protocolFee, split } from './money.ts';

const anyNanm = fc.bigInt(0n, 2n ** 63n);

describe('fee (spec rule 3: 200 bps, floored, merchant + fee == anm)', () => {
  it('FEE_BPS is 200', () => expect(FEE_BPS).toBe(200));

  it('examples', () => {
    expect(protocolFee(0n)).toBe(0n);
    expect(protocolFee(49n)).toBe(0n);
    expect(protocolFee(50n)).toBe(1n);
    expect(split(1_000_000_000n)).toEqual({ anm_amount: 1_000_000_000n, merchant_amount: 980_000_000n, protocol_fee: 20_000_000n });
    expect(() => protocolFee(-1n)).toThrow(RangeError);
  });

  it('fee is the floor of 2%: fee*10000 <= anm*200 < (fee+1)*10000', () => {
    fc.assert(
      fc.property(anyNanm, (anm) => {
        const fee = protocolFee(anm);
        return fee * 10_000n <= anm * 200n && anm * 200n < (fee + 1n) * 10_000n;
      }),
    );
  });

  it('split is exact', () => {
    fc.assert(
      fc.property(anyNanm, (anm) => {
        const s = split(anm);
        return s.anm_amount === anm && s.merchant_amount + s.protocol_fee === anm && s.merchant_amount >= 0n;
      }),
    );
  });
});

describe('formatAnm (DESIGN §4 Amount display)', () => {
  it.each([
    [1_234_500_000_000n, '1,234.5 ANM'],
    [0n, '0 ANM'],
    [1n, '0.000000001 ANM'],
    [1_000_000_000n, '1 ANM'],
    [999_999_999_999n, '999.999999999 ANM'],
    [1_000_000_000_000_000n, '1,000,000 ANM'],
    [123_456_789_012_345_678n, '123,456,789.012345678 ANM'],
    [-1_500_000_000n, '-1.5 ANM'],
  ])('%s -> %s', (n, s) => {
    expect(formatAnm(n)).toBe(s);
    expect(parseAnmFormatted(s)).toBe(n);
  });

  it('round trips over the whole nANM range', () => {
    fc.assert(fc.property(anyNanm, (n) => parseAnmFormatted(formatAnm(n)) === n));
  });

  it('is exact: no trailing zeros, groups of three', () => {
    fc.assert(
      fc.property(anyNanm, (n) => {
        const s = formatAnm(n);
        return /^\d{1,3}(,\d{3})*(\.\d*[1-9])? ANM$/.test(s);
      }),
    );
  });

  it('refuses what formatAnm cannot produce', () => {
    for (const s of ['1234 ANM', '1.0000000001 ANM', '1,23 ANM', '1.5', ' 1 ANM', '']) expect(parseAnmFormatted(s)).toBeNull();
  });
});

describe('parseDecimalAmount (CreatePaymentIntentRequest.amount, 400 invalid_amount)', () => {
  it.each([
    ['1', 9, 1_000_000_000n],
    ['12.5', 2, 1250n],
    ['0.000000001', 9, 1n],
    ['007.10', 2, 710n],
  ])('%s with %d decimals -> %s', (s, d, v) => expect(parseDecimalAmount(s, d)).toBe(v));

  it.each([['0'], ['0.00'], ['1.234'], ['-1'], ['1e3'], ['.5'], ['5.'], [' 1'], ['1,000'], ['']])('refuses %j', (s) => {
    expect(parseDecimalAmount(s, 2)).toBeNull();
  });

  it('agrees with formatting for ANM amounts', () => {
    fc.assert(
      fc.property(fc.bigInt(1n, 2n ** 63n), (n) => {
        const plain = formatAnm(n).replace(' ANM', '').replaceAll(',', '');
        return parseDecimalAmount(plain, 9) === n;
      }),
    );
  });
});

// A decimal string as num/den, for checking conversions with exact rationals.
function frac(s: string): [bigint, bigint] {
  const [w = '0', f = ''] = s.split('.');
  return [BigInt(w + f), 10n ** BigInt(f.length)];
}

const rateArb = fc
  .tuple(fc.bigInt(0n, 1_000_000n), fc.integer({ min: 0, max: 8 }), fc.bigInt(0n, 99_999_999n))
  .map(([w, places, f]) => (places === 0 ? `${w}` : `${w}.${(f % 10n ** BigInt(places)).toString().padStart(places, '0')}`))
  .filter((r) => frac(r)[0] > 0n);

describe('fiatToNanm (DESIGN §4 Fiat: nANM = ceil(amount / rate × 10^9))', () => {
  it('examples', () => {
    expect(fiatToNanm('10', '0.25')).toBe(40_000_000_000n);
    expect(fiatToNanm(1000n, '0.25')).toBe(40_000_000_000n);
    expect(fiatToNanm('1', '3')).toBe(333_333_334n);
    expect(fiatToNanm('0.01', '1000000')).toBe(10n);
    expect(() => fiatToNanm('1', '0')).toThrow(RangeError);
    expect(() => fiatToNanm('1', 'abc')).toThrow(RangeError);
    expect(() => fiatToNanm('x', '1')).toThrow(RangeError);
  });

  it('never under-charges and never over-charges by a whole nANM', () => {
    fc.assert(
      fc.property(fc.bigInt(1n, 10n ** 15n), rateArb, fc.boolean(), (minor, rate, asString) => {
        const amount = asString ? `${minor / 100n}.${(minor % 100n).toString().padStart(2, '0')}` : minor;
        const n = fiatToNanm(amount, rate);
        const [rn, rd] = frac(rate);
        // amount = minor / 100; paid value in fiat = n * rate / 1e9
        const paid = (k: bigint) => k * rn * 100n; // scaled by rd * 1e9 * 100
        const owed = minor * rd * 1_000_000_000n;
        return paid(n) >= owed && paid(n - 1n) < owed;
      }),
    );
  });
});

describe('nanm()', () => {
  it('parses wire strings and refuses the rest', () => {
    expect(nanm('42')).toBe(42n);
    expect(() => nanm('4.2')).toThrow(RangeError);
    expect(() => nanm('-1')).toThrow(RangeError);
  });
});
