/**
 * Money of the marketplace (spec "Fee rule", "Limits"; DESIGN §5 "Money"). Atomic units as
 * `bigint` end to end: 6 decimals for USDC, 9 for ANM. A float never touches an amount.
 */

export const MARKET_FEE_BPS = 50;
const BPS = 10_000n;

export const MARKET_ASSETS = {
  /** EIP-3009 `value` is a uint256. */
  USDC: { decimals: 6, maxAtomic: 2n ** 256n - 1n },
  /** An ANM transfer output (plus its chain fee) fits a u64 (machines/chain/tx.ts). */
  ANM: { decimals: 9, maxAtomic: 2n ** 64n - 1n },
} as const;

export type MarketAsset = keyof typeof MARKET_ASSETS;

/** The USDC token on Base and its EIP-712 domain (DESIGN §5 "Legs"). */
export const USDC_TOKEN = {
  address: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
  name: 'USD Coin',
  version: '2',
  chainId: 8453,
} as const;

/** marketplace.md "Payment lanes": network ids and split schemes, and the plain x402 scheme of one leg. */
export const MARKET_LANES = {
  USDC: { network: 'eip155:8453', scheme: 'exact-split', legScheme: 'exact' },
  ANM: { network: 'native:1', scheme: 'exact-anm-split', legScheme: 'exact-anm' },
} as const satisfies Record<MarketAsset, { network: string; scheme: string; legScheme: string }>;

/** Each lane's network id: the USDC lane's is its token's chain (USDC_NETWORK), the ANM lane's is fixed. */
export type LaneNetworks = Record<MarketAsset, string>;

export const DEFAULT_LANE_NETWORKS: LaneNetworks = { USDC: MARKET_LANES.USDC.network, ANM: MARKET_LANES.ANM.network };

/** The CAIP-2 id of an EVM chain, as x402 v2 names it. */
export function evmNetwork(chainId: number): `eip155:${number}` {
  return `eip155:${chainId}`;
}

export function isMarketAsset(s: unknown): s is MarketAsset {
  return s === 'USDC' || s === 'ANM';
}

export interface PriceSplit {
  seller: bigint;
  fee: bigint;
  total: bigint;
}

/** 50 bps of the seller price rounded up, and never below one atomic unit. */
export function marketFee(seller: bigint): bigint {
  if (seller <= 0n) throw new RangeError('a seller price must be at least one atomic unit');
  const fee = (seller * BigInt(MARKET_FEE_BPS) + BPS - 1n) / BPS;
  return fee < 1n ? 1n : fee;
}

/** The largest seller price whose total (seller + fee) is still representable in `asset`. */
export function maxSellerPrice(asset: MarketAsset): bigint {
  const max = MARKET_ASSETS[asset].maxAtomic;
  // total = s + ceil(s/200) <= max  ⇔  s <= floor(200·max/201); the neighbours settle the ceiling.
  let s = (max * 200n) / 201n;
  while (s + marketFee(s) > max) s -= 1n;
  while (s + 1n + marketFee(s + 1n) <= max) s += 1n;
  return s;
}

/** The split of a seller price; throws when the total would not fit the asset's ledger. */
export function priceSplit(asset: MarketAsset, seller: bigint): PriceSplit {
  const fee = marketFee(seller);
  const total = seller + fee;
  if (total > MARKET_ASSETS[asset].maxAtomic) throw new RangeError(`total ${total} exceeds what ${asset} can represent`);
  return { seller, fee, total };
}

/** The ledger invariant, checked wherever money moves: gross = seller + fee. */
export function assertGross(gross: bigint, seller: bigint, fee: bigint): void {
  if (gross !== seller + fee) throw new RangeError(`gross ${gross} != seller ${seller} + fee ${fee}`);
}

/**
 * Exact decimal string with exactly the asset's places: 1500000n USDC → `1.500000` (the
 * spec's 6 places); ANM keeps its 9 (DESIGN §5 "Money"), so no nANM is ever rounded away.
 */
export function formatAtomic(asset: MarketAsset, atomic: bigint): string {
  if (atomic < 0n) throw new RangeError('amounts are never negative');
  const d = MARKET_ASSETS[asset].decimals;
  const unit = 10n ** BigInt(d);
  return `${atomic / unit}.${(atomic % unit).toString().padStart(d, '0')}`;
}

const DECIMAL = /^(0|[1-9][0-9]*)(?:\.([0-9]+))?$/;

/**
 * A decimal string in `asset` units as atomic units; null when it is not a plain decimal,
 * has more places than the asset has, is zero, or is beyond the asset's range.
 */
export function parseAtomicDecimal(asset: MarketAsset, s: string): bigint | null {
  const m = DECIMAL.exec(s);
  if (!m) return null;
  const [, whole = '0', frac = ''] = m;
  const d = MARKET_ASSETS[asset].decimals;
  if (frac.length > d) return null;
  const atomic = BigInt(whole) * 10n ** BigInt(d) + BigInt(frac.padEnd(d, '0') || '0');
  return atomic > 0n && atomic <= MARKET_ASSETS[asset].maxAtomic ? atomic : null;
}

/** The most places any market asset has (ANM's 9): a ceiling given with more names no price. */
const CEILING_PLACES = Math.max(...Object.values(MARKET_ASSETS).map((a) => a.decimals));

/**
 * A price ceiling compared by value in `asset` units (marketplace.md: `max_price` is a ceiling
 * on the total price): places beyond the asset's are floored away (an integer total is at or
 * under 1.0000001 exactly when it is at or under 1.000000 USDC), and a ceiling beyond the
 * asset's range holds every price it has. Null when not a plain decimal, zero, or with more
 * places than any asset has; 0n for a ceiling under one of the asset's units.
 */
export function parseCeiling(asset: MarketAsset, s: string): bigint | null {
  const m = DECIMAL.exec(s);
  if (!m) return null;
  const [, whole = '0', frac = ''] = m;
  if (frac.length > CEILING_PLACES || (whole === '0' && /^0*$/.test(frac))) return null;
  const { decimals: d, maxAtomic } = MARKET_ASSETS[asset];
  const atomic = BigInt(whole) * 10n ** BigInt(d) + BigInt(frac.slice(0, d).padEnd(d, '0') || '0');
  return atomic > maxAtomic ? maxAtomic : atomic;
}

/**
 * Whether a request's `max_price` is one it may send: with its asset named, a decimal in that
 * asset's units (no more places than it has); with none, a value the ceiling of each asset
 * is taken from (`parseCeiling`).
 */
export function maxPriceAccepted(asset: MarketAsset | undefined, s: string): boolean {
  return asset === undefined ? parseCeiling('ANM', s) !== null : parseAtomicDecimal(asset, s) !== null;
}

/** An atomic integer string (`^[0-9]+$`, no leading zero) as bigint, or null. */
export function parseAtomic(asset: MarketAsset, s: string): bigint | null {
  if (!/^(0|[1-9][0-9]*)$/.test(s)) return null;
  const n = BigInt(s);
  return n <= MARKET_ASSETS[asset].maxAtomic ? n : null;
}
