/**
 * The capability search of `GET /api/v1/search` and of quotes (DESIGN §5 "Discovery"): words
 * ranked over name, description, category and tags with MiniSearch, then filtered by asset
 * and by the TOTAL price ceiling (marketplace.md "A price that is the max_price ceiling ... is
 * the TOTAL the buyer pays"). The index lives in memory and catches up from the listing
 * actors' rows, so every marketplace process answers from the same state. Answers are kept
 * (least recently used first out) until a listing changes: agents ask the same capabilities
 * over and over, and ranking every matching listing costs far more than a lookup.
 */
import MiniSearch from 'minisearch';
import { parseAtomicDecimal, type MarketAsset } from '../../machines/money/market.ts';
import type { ListingRecord } from '../../machines/listing/view.ts';
import type { Listings } from './listings.ts';

interface Doc {
  id: string;
  name: string;
  description: string;
  category: string;
  tags: string;
}

export interface SearchQuery {
  capability?: string | undefined;
  /** A decimal string in the units of each listing's asset: a ceiling on the total. */
  maxPrice?: string | undefined;
  asset?: MarketAsset | undefined;
  limit?: number | undefined;
}

export interface SearchHit {
  record: ListingRecord;
  score: number;
}

const BOOST = { name: 3, tags: 2, category: 2, description: 1 };
const CACHE_MAX = 1024;

export class SearchIndex {
  private readonly mini = new MiniSearch<Doc>({ fields: ['name', 'description', 'category', 'tags'], idField: 'id' });
  private readonly records = new Map<string, ListingRecord>();
  /** Each listing's total per asset, as bigint: the ceiling is compared without parsing per hit. */
  private readonly totals = new Map<string, Array<{ asset: MarketAsset; total: bigint }>>();
  private readonly answers = new Map<string, readonly SearchHit[]>();
  private since: Date | null = null;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly listings: Listings) {}

  upsert(r: ListingRecord): void {
    const prev = this.records.get(r.resource_id);
    // The catch-up reads the newest listing again on every turn: an unchanged one keeps the answers.
    if (prev && JSON.stringify(prev) === JSON.stringify(r)) return;
    if (this.mini.has(r.resource_id)) this.mini.discard(r.resource_id);
    this.mini.add({ id: r.resource_id, name: r.name, description: r.description, category: r.category, tags: r.tags.join(' ') });
    this.records.set(r.resource_id, r);
    this.totals.set(r.resource_id, r.accepted_assets.map((a) => ({ asset: a.asset, total: BigInt(a.total_price_atomic) })));
    this.answers.clear();
  }

  get size(): number {
    return this.records.size;
  }

  /** Reads the listings changed since the last catch-up (all of them the first time). */
  async refresh(): Promise<void> {
    const { records, newest } = await this.listings.changedSince(this.since);
    for (const r of records) this.upsert(r);
    this.since = newest;
  }

  /** Catches up every `ms` until stopped; a failed read is retried on the next turn. */
  start(ms = 1000): void {
    const tick = (): void => {
      this.timer = setTimeout(() => void this.refresh().catch(() => undefined).finally(() => this.timer && tick()), ms);
      this.timer.unref();
    };
    tick();
  }

  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** Ranked hits under the ceilings; the array is shared with later callers, never to be changed. */
  search(q: SearchQuery): readonly SearchHit[] {
    const key = JSON.stringify([q.capability?.trim() ?? '', q.maxPrice ?? null, q.asset ?? null, q.limit ?? 0]);
    const kept = this.answers.get(key);
    if (kept) {
      this.answers.delete(key);
      this.answers.set(key, kept);
      return kept;
    }
    const hits = this.rank(q);
    if (this.answers.size >= CACHE_MAX) this.answers.delete(this.answers.keys().next().value!);
    this.answers.set(key, hits);
    return hits;
  }

  private rank(q: SearchQuery): SearchHit[] {
    const words = q.capability?.trim() ?? '';
    const ranked: Iterable<{ id: string; score: number }> = words
      ? this.mini.search(words, { boost: BOOST, prefix: true, fuzzy: 0.2, combineWith: 'OR' }).map((h) => ({ id: String(h.id), score: h.score }))
      : [...this.records.keys()].map((id) => ({ id, score: 0 }));
    const ceilings = ceilingsOf(q.maxPrice);
    const out: SearchHit[] = [];
    for (const h of ranked) {
      const record = this.records.get(h.id);
      const totals = this.totals.get(h.id);
      if (!record || !totals || !totals.some((t) => (!q.asset || t.asset === q.asset) && (ceilings === null || (ceilings[t.asset] !== null && t.total <= ceilings[t.asset]!)))) continue;
      out.push({ record, score: h.score });
      if (q.limit && out.length >= q.limit) break;
    }
    return out;
  }
}

/** The ceiling in each asset's atomic units (a decimal with more places than an asset has is no ceiling it can meet), or null for none. */
function ceilingsOf(maxPrice: string | undefined): Record<MarketAsset, bigint | null> | null {
  return maxPrice === undefined ? null : { USDC: parseAtomicDecimal('USDC', maxPrice), ANM: parseAtomicDecimal('ANM', maxPrice) };
}
