/**
 * Money rules of the merchant service (spec rules 1-3, DESIGN §4 "Amount display", "Fiat").
 * Everything is exact bigint arithmetic: a float never touches an amount.
 */

export const ANM_DECIMALS = 9;
export const NANM_PER_ANM = 10n ** BigInt(ANM_DECIMALS);
export const FEE_BPS = 200;
const BPS_DENOMINATOR = 10_000n;

export interface Split {
  anm_amount: bigint;
  merchant_amount: bigint;
  protocol_fee: bigint;
}

function assertNonNegative(n: bigint, what: string): void {
  if (n < 0n) throw new RangeError(`${what} must not be negative`);
}

/** 200 bps of the charge, floored: the merchant never pays a fraction of a nANM extra. */
export function protocolFee(anm: bigint): bigint {
  assertNonNegative(anm, 'amount');
  return (anm * BigInt(FEE_BPS)) / BPS_DENOMINATOR;
}

/** The fee split of a charge; merchant_amount + protocol_fee == anm_amount by construction. */
export function split(anm: bigint): Split {
  const fee = protocolFee(anm);
  return { anm_amount: anm, merchant_amount: anm - fee, protocol_fee: fee };
}

const GROUPS = /\B(?=(\d{3})+(?!\d))/g;

/** Exact decimal ANM, thousands grouped with ',', trailing zeros trimmed: `1,234.5 ANM`. */
export function formatAnm(nanm: bigint): string {
  const sign = nanm < 0n ? '-' : '';
  const abs = nanm < 0n ? -nanm : nanm;
  const whole = (abs / NANM_PER_ANM).toString().replace(GROUPS, ',');
  const frac = abs % NANM_PER_ANM;
  const fraction = frac === 0n ? '' : '.' + frac.toString().padStart(ANM_DECIMALS, '0').replace(/0+$/, '');
  return `${sign}${whole}${fraction} ANM`;
}

const FORMATTED = /^(-?)(\d{1,3}(?:,\d{3})*)(?:\.(\d{1,9}))? ANM$/;

/** Inverse of `formatAnm`; null for anything `formatAnm` could not have produced. */
export function parseAnmFormatted(s: string): bigint | null {
  const m = FORMATTED.exec(s);
  if (!m) return null;
  const [, sign = '', whole = '0', frac = ''] = m;
  const value = BigInt(whole.replaceAll(',', '')) * NANM_PER_ANM + BigInt(frac.padEnd(ANM_DECIMALS, '0'));
  return sign === '-' ? -value : value;
}

const DECIMAL = /^([0-9]+)(?:\.([0-9]+))?$/;

/** A non-negative decimal string as the exact fraction num / 10^scale. */
function decimalParts(s: string): { num: bigint; scale: number } | null {
  const m = DECIMAL.exec(s);
  if (!m) return null;
  const [, whole = '0', frac = ''] = m;
  return { num: BigInt(whole + frac), scale: frac.length };
}

/**
 * A request amount (`"12.5"`) in units of 10^-decimals. Null when it is not a plain decimal,
 * has more places than the currency allows, or is not greater than zero (400 invalid_amount).
 */
export function parseDecimalAmount(s: string, decimals: number): bigint | null {
  if (!Number.isInteger(decimals) || decimals < 0) throw new RangeError('decimals must be a non-negative integer');
  const d = decimalParts(s);
  if (!d || d.scale > decimals) return null;
  const units = d.num * 10n ** BigInt(decimals - d.scale);
  return units > 0n ? units : null;
}

function ceilDiv(n: bigint, d: bigint): bigint {
  return (n + d - 1n) / d;
}

/**
 * nANM for a fiat charge at a locked quote: ceil(amount / rate × 10^9). Rounding up means the
 * merchant is never under-charged by the conversion. `amount` is either a decimal string in
 * currency units or a bigint in minor units (`minorDecimals` places, cents by default);
 * `rate` is the price of 1 ANM in that currency, as a decimal string.
 */
export function fiatToNanm(amount: string | bigint, rate: string, minorDecimals = 2): bigint {
  const a = typeof amount === 'bigint' ? { num: amount, scale: minorDecimals } : decimalParts(amount);
  const r = decimalParts(rate);
  if (!a || a.num < 0n || !Number.isInteger(a.scale) || a.scale < 0) throw new RangeError(`invalid amount: ${String(amount)}`);
  if (!r || r.num === 0n) throw new RangeError(`invalid rate: ${rate}`);
  // amount / rate = (a.num / 10^a.scale) / (r.num / 10^r.scale)
  const numerator = a.num * 10n ** BigInt(r.scale) * NANM_PER_ANM;
  const denominator = r.num * 10n ** BigInt(a.scale);
  return ceilDiv(numerator, denominator);
}

/** Parses a wire nANM string (`^[0-9]+$`); throws on anything else, as context values are pre-validated. */
export function nanm(s: string): bigint {
  if (!/^[0-9]+$/.test(s)) throw new RangeError(`not an nANM string: ${s}`);
  return BigInt(s);
}
