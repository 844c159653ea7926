/**
 * The capability search of `GET /api/v1/search` and of quotes (DESIGN §5 "Discovery"): words
 * ranked over name, description, category and tags with MiniSearch, then filtered by asset
 * and by the TOTAL price ceiling (marketplace.md "A price that is the max_price ceiling ... is
 * the TOTAL the buyer pays"). The index lives in memory and catches up from the listing
 * actors' rows, so every marketplace process answers from the same state.
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

export class SearchIndex {
  private readonly mini = new MiniSearch<Doc>({ fields: ['name', 'description', 'category', 'tags'], idField: 'id' });
  private readonly records = new Map<string, ListingRecord>();
  private since: Date | null = null;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly listings: Listings) {}

  upsert(r: ListingRecord): void {
    if (this.mini.has(r.resource_id)) this.mini.discard(r.resource_id);
    this.mini.add({ id: r.resource_id, name: r.name, description: r.description, category: r.category, tags: r.tags.join(' ') });
    this.records.set(r.resource_id, r);
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

  search(q: SearchQuery): SearchHit[] {
    const words = q.capability?.trim() ?? '';
    const ranked: SearchHit[] = words
      ? this.mini
          .search(words, { boost: BOOST, prefix: true, fuzzy: 0.2, combineWith: 'OR' })
          .flatMap((h) => {
            const record = this.records.get(String(h.id));
            return record ? [{ record, score: h.score }] : [];
          })
      : [...this.records.values()].map((record) => ({ record, score: 0 }));
    const hits = ranked.filter((h) => underCeiling(h.record, q));
    return q.limit ? hits.slice(0, q.limit) : hits;
  }
}

/** True when some accepted asset (the asked one, if any) has a total at or under the ceiling. */
export function underCeiling(r: ListingRecord, q: Pick<SearchQuery, 'asset' | 'maxPrice'>): boolean {
  return r.accepted_assets.some((a) => {
    if (q.asset && a.asset !== q.asset) return false;
    if (q.maxPrice === undefined) return true;
    const ceiling = parseAtomicDecimal(a.asset, q.maxPrice);
    return ceiling !== null && BigInt(a.total_price_atomic) <= ceiling;
  });
}
