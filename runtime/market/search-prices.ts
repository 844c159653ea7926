/**
 * The asset and price ceiling of a search (marketplace.md: `max_price` is a ceiling on the
 * TOTAL the buyer pays) as integer comparisons. Each listing's place in the order of totals
 * is kept per asset, so a ceiling becomes a count (a binary search, once per question) and a
 * hit passes when its place is under that count: a question that filters out most hits no
 * longer compares bigints for every hit it reads.
 */
import type { MarketAsset } from '../../machines/money/market.ts';
import type { Pass } from './search-rank.ts';

/** Each asset's ceiling in atomic units; null for one that names no price (the routes refuse it), which nothing meets. */
export type Ceilings = Record<MarketAsset, bigint | null>;

/** The place of a listing that does not accept the asset: under no count. */
const NONE = 0x7fffffff;

interface Order {
  /** Per slot, its place among the listings that accept the asset, by total; NONE for the others. */
  place: Int32Array;
  /** The accepting listings' totals, ascending. */
  totals: bigint[];
}

export class PriceFilter {
  private readonly totals: Array<Partial<Record<MarketAsset, bigint>>> = [];
  private orders: Record<MarketAsset, Order> | null = null;

  /** A listing's totals per asset (the lowest, should an asset be listed twice); the order is rebuilt on the next question only if one changed. */
  set(slot: number, accepted: ReadonlyArray<{ asset: MarketAsset; total_price_atomic: string }>): void {
    const t: Partial<Record<MarketAsset, bigint>> = {};
    for (const a of accepted) {
      const v = BigInt(a.total_price_atomic);
      const had = t[a.asset];
      if (had === undefined || v < had) t[a.asset] = v;
    }
    const old = this.totals[slot];
    if (old !== undefined && old.USDC === t.USDC && old.ANM === t.ANM) return;
    this.totals[slot] = t;
    this.orders = null;
  }

  /** The listings that accept `asset` (any, if not given) at a total under its ceiling. */
  under(ceilings: Ceilings | null, asset: MarketAsset | undefined): Under {
    const orders = (this.orders ??= { USDC: this.order('USDC'), ANM: this.order('ANM') });
    return new Under(orders.USDC.place, count(orders, 'USDC', ceilings, asset), orders.ANM.place, count(orders, 'ANM', ceilings, asset));
  }

  private order(asset: MarketAsset): Order {
    const held: Array<{ slot: number; total: bigint }> = [];
    this.totals.forEach((t, slot) => {
      const total = t[asset];
      if (total !== undefined) held.push({ slot, total });
    });
    held.sort((a, b) => (a.total < b.total ? -1 : a.total > b.total ? 1 : a.slot - b.slot));
    const place = new Int32Array(this.totals.length).fill(NONE);
    held.forEach((h, i) => (place[h.slot] = i));
    return { place, totals: held.map((h) => h.total) };
  }
}

/** A listing passes when its place in an asset's order is under that asset's count. */
export class Under implements Pass {
  constructor(
    private readonly usdc: Int32Array,
    private readonly usdcCount: number,
    private readonly anm: Int32Array,
    private readonly anmCount: number,
  ) {}

  has(slot: number): boolean {
    return this.usdc[slot]! < this.usdcCount || this.anm[slot]! < this.anmCount;
  }
}

/** How many of `a`'s accepting listings pass: none when another asset is asked for. */
function count(orders: Record<MarketAsset, Order>, a: MarketAsset, ceilings: Ceilings | null, asset: MarketAsset | undefined): number {
  if (asset !== undefined && asset !== a) return 0;
  const totals = orders[a].totals;
  if (ceilings === null) return totals.length;
  const c = ceilings[a];
  return c === null ? 0 : atOrUnder(totals, c);
}

/** How many of the ascending `totals` are at or under `ceiling`. */
function atOrUnder(totals: readonly bigint[], ceiling: bigint): number {
  let lo = 0;
  let hi = totals.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (totals[mid]! <= ceiling) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
