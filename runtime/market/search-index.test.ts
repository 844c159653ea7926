/**
 * The search index (DESIGN §5 "Discovery", ADR 0035): its ranking is MiniSearch's own OR
 * ranking over name, description, category and tags, whatever its kept results; the page is
 * the head of the full ranking; a listing's change is seen by the very next search.
 */
import fc from 'fast-check';
import MiniSearch from 'minisearch';
import { describe, expect, it } from 'vitest';
import type { ListingContext } from '../../machines/listing/context.ts';
import { listingRecord, type ListingRecord } from '../../machines/listing/view.ts';
import { MARKET_ASSETS } from '../../machines/money/market.ts';
import { SEARCH_FIELDS, SearchIndex, wordOptions, type SearchQuery } from './search-index.ts';
import type { Listings } from './listings.ts';

interface Text {
  name: string;
  description?: string;
  category?: string;
  tags?: string[];
}

const USDC_LEG = { asset: 'USDC', pay_to: '0x0000000000000000000000000000000000000001' };
const ANM_LEG = { asset: 'ANM', pay_to: 'anm1seller' };

/** A listing; `both` accepts USDC at the seller price and ANM at a thousand times it in atomic units (a millionth as much). */
function record(text: Text, sellerAtomic: number, id = 'res_01', asset: 'USDC' | 'ANM' | 'both' = 'USDC'): ListingRecord {
  const legs =
    asset === 'both'
      ? [{ ...USDC_LEG, seller_price_atomic: String(sellerAtomic) }, { ...ANM_LEG, seller_price_atomic: String(sellerAtomic * 1000) }]
      : [{ ...(asset === 'USDC' ? USDC_LEG : ANM_LEG), seller_price_atomic: String(sellerAtomic) }];
  const ctx = {
    resource_id: id, provider_id: 'prov_01', description: '', category: '', tags: [], ...text, endpoint: `https://s.example/${id}`, method: 'GET', model: 'per_call',
    assets: legs,
    documentation_url: null, request_schema: null, response_schema: null, example_request: null, example_response: null, created_at: 0, scans: [], transactions: 0,
  } as unknown as ListingContext;
  return listingRecord(ctx, 'unverified');
}

const ids = (hits: readonly { record: ListingRecord }[]) => hits.map((h) => h.record.resource_id);

/** MiniSearch itself, with the same per-word options, over the same listings. */
function reference(records: ListingRecord[]) {
  const mini = new MiniSearch({ fields: SEARCH_FIELDS, idField: 'id' });
  mini.addAll(records.map((r) => ({ id: r.resource_id, name: r.name, description: r.description, category: r.category, tags: r.tags.join(' ') })));
  return (capability: string) =>
    mini.search(capability, { ...wordOptions('x'), prefix: (t) => wordOptions(t).prefix, fuzzy: (t) => wordOptions(t).fuzzy }).map((h) => ({ id: String(h.id), score: h.score }));
}

const VOCAB = ['weather', 'wether', 'weathers', 'forecast', 'translate', 'translation', 'geo', 'geocode', 'ai', 'a', 'news', 'new', '7', '17', '170', 'ocr', 'storm'];
const word = fc.constantFrom(...VOCAB);
const phrase = fc.array(word, { minLength: 0, maxLength: 4 }).map((w) => w.join(' '));
const listing = fc.record({ name: phrase, description: phrase, category: word, tags: fc.array(word, { maxLength: 3 }), price: fc.integer({ min: 1, max: 40_000 }), asset: fc.constantFrom('USDC' as const, 'ANM' as const, 'both' as const) });
const filters = fc.record({ maxPrice: fc.constantFrom(undefined, '0.0201', '0.01', '0.00002', '0.0201005', '0.000020001'), asset: fc.constantFrom(undefined, 'USDC' as const, 'ANM' as const) });

/** A ceiling of at most 9 places in billionths: the value a total is compared with. */
const billionths = (s: string): bigint => {
  const [whole = '0', frac = ''] = s.split('.');
  return BigInt(whole) * 1_000_000_000n + BigInt(frac.padEnd(9, '0'));
};

/** The rule, per hit: an accepted asset (the one asked for, if any) whose total is at or under the ceiling by value. */
function passes(r: ListingRecord, q: SearchQuery): boolean {
  return r.accepted_assets.some((a) => {
    if (q.asset && a.asset !== q.asset) return false;
    if (q.maxPrice === undefined) return true;
    return BigInt(a.total_price_atomic) * 10n ** BigInt(9 - MARKET_ASSETS[a.asset].decimals) <= billionths(q.maxPrice);
  });
}
const query = fc.array(fc.oneof(word, word.map((w) => w.toUpperCase()), fc.constantFrom('weathr', 'transl', 'zzz', 'Weather,', '1')), { minLength: 1, maxLength: 4 }).map((w) => w.join(' '));

describe('SearchIndex ranking', () => {
  it("ranks as MiniSearch's OR query does (scores, order), and a page is the head of the whole ranking under the filters", () => {
    fc.assert(
      fc.property(fc.array(listing, { minLength: 1, maxLength: 25 }), fc.array(query, { minLength: 1, maxLength: 6 }), fc.constantFrom(1, 2, 3, 5, 0), filters, (ls, qs, limit, f) => {
        const records = ls.map((l, i) => record({ name: l.name, description: l.description, category: l.category, tags: l.tags }, l.price, `res_${i}`, l.asset));
        const idx = new SearchIndex({} as Listings);
        for (const r of records) idx.upsert(r);
        const ref = reference(records);
        for (const capability of qs) {
          const want = ref(capability);
          const got = idx.search({ capability });
          expect(ids(got).sort()).toEqual(want.map((w) => w.id).sort());
          const byId = new Map(want.map((w) => [w.id, w.score]));
          for (const h of got) expect(h.score).toBeCloseTo(byId.get(h.record.resource_id)!, 9);
          for (let i = 1; i < got.length; i++) expect(got[i - 1]!.score).toBeGreaterThanOrEqual(got[i]!.score);
          // Filters and the page: the head of the full ranking's passing hits, scores and all, and
          // one more than the page (what `has_more` is told from) likewise.
          const q: SearchQuery = { capability, ...f };
          const passing = got.filter((h) => passes(h.record, q));
          expect(idx.search({ ...q, limit })).toEqual(limit ? passing.slice(0, limit) : passing);
          expect(idx.search({ ...q, limit: limit + 1 })).toEqual(passing.slice(0, limit + 1));
        }
      }),
      { numRuns: 150, examples: [[[{ name: 'weather 17', description: 'storm', category: 'geo', tags: ['ai'], price: 20_000, asset: 'USDC' }, { name: 'wether', description: 'weather weather', category: 'weather', tags: [], price: 10, asset: 'USDC' }], ['weather 17 weather'], 1, { maxPrice: '0.0201', asset: 'USDC' }]] },
    );
  });

  it('a word of one character is not a prefix and a number has no typos; a word with letters has both', () => {
    const idx = new SearchIndex({} as Listings);
    idx.upsert(record({ name: '170 alerts' }, 1, 'res_a'));
    idx.upsert(record({ name: 'weather' }, 1, 'res_b'));
    expect(ids(idx.search({ capability: '1' }))).toEqual([]);
    expect(ids(idx.search({ capability: '17' }))).toEqual(['res_a']);
    expect(ids(idx.search({ capability: '171' }))).toEqual([]);
    expect(ids(idx.search({ capability: 'wether' }))).toEqual(['res_b']);
  });
});

describe('SearchIndex kept answers', () => {
  it('a new or changed listing is seen by the very next search; an unchanged one keeps the kept answer', () => {
    const idx = new SearchIndex({} as Listings);
    expect(idx.search({ capability: 'geocode', maxPrice: '0.02' })).toEqual([]);
    idx.upsert(record({ name: 'geocode service' }, 10_000));
    const first = idx.search({ capability: 'geocode', maxPrice: '0.02' });
    expect(ids(first)).toEqual(['res_01']);
    idx.upsert(record({ name: 'geocode service' }, 10_000));
    expect(idx.search({ capability: 'geocode', maxPrice: '0.02' })).toBe(first);
    // The same question asked in other words is the same answer.
    expect(idx.search({ capability: '  GEOCODE ', maxPrice: '0.020' })).toBe(first);
    // Seller price 0.02 → total 0.0201: over the ceiling now.
    idx.upsert(record({ name: 'geocode service' }, 20_000));
    expect(idx.search({ capability: 'geocode', maxPrice: '0.02' })).toEqual([]);
    expect(idx.search({ capability: 'geocode', maxPrice: '0.0201' })).toHaveLength(1);
    // A ceiling is a value: more places than USDC has are floored away (0.0201001 → 0.020100).
    expect(idx.search({ capability: 'geocode', maxPrice: '0.0201001' })).toHaveLength(1);
    expect(idx.search({ capability: 'geocode', maxPrice: '0.0200999' })).toEqual([]);
    // The limit stops early.
    idx.upsert(record({ name: 'geocode two' }, 1, 'res_02'));
    expect(idx.search({ capability: 'geocode', limit: 1 })).toHaveLength(1);
    expect(idx.search({ capability: 'geocode' })).toHaveLength(2);
  });

  it("a listing's new words re-rank every kept word; a change that leaves the words gives the new record at the same score", () => {
    const idx = new SearchIndex({} as Listings);
    idx.upsert(record({ name: 'weather', tags: ['maps'] }, 100, 'res_a'));
    idx.upsert(record({ name: 'maps', description: 'weather' }, 100, 'res_b'));
    const before = idx.search({ capability: 'maps weather' });
    expect(ids(before)).toEqual(['res_a', 'res_b']);
    expect(ids(idx.search({ capability: 'storm' }))).toEqual([]);
    // New words on res_b: it leads for both words now, and the kept "storm" hits are gone.
    idx.upsert(record({ name: 'maps weather storm', tags: ['weather', 'maps'] }, 100, 'res_b'));
    const after = idx.search({ capability: 'maps weather' });
    expect(ids(after)).toEqual(['res_b', 'res_a']);
    expect(ids(idx.search({ capability: 'storm' }))).toEqual(['res_b']);
    expect(after).toEqual(new SearchIndexWith([record({ name: 'weather', tags: ['maps'] }, 100, 'res_a'), record({ name: 'maps weather storm', tags: ['weather', 'maps'] }, 100, 'res_b')]).search({ capability: 'maps weather' }));
    // A new status (a scan) keeps the words: same scores, the new record.
    const scanned = { ...record({ name: 'weather', tags: ['maps'] }, 100, 'res_a'), status: 'verified' as const };
    idx.upsert(scanned);
    const rescanned = idx.search({ capability: 'maps weather' });
    expect(rescanned).not.toBe(after);
    expect(rescanned.map((h) => h.score)).toEqual(after.map((h) => h.score));
    expect(rescanned.find((h) => h.record.resource_id === 'res_a')?.record.status).toBe('verified');
  });

  it("a question or a word asked once keeps nothing; its second ask keeps the answer and the word's hits", () => {
    const idx = new SearchIndexWith([record({ name: 'weather storm' }, 100, 'res_a'), record({ name: 'maps' }, 100, 'res_b')]);
    const kept = idx as unknown as { answers: Map<string, unknown>; words: Map<string, unknown> };
    const first = idx.search({ capability: 'storm' });
    expect([kept.answers.size, kept.words.size]).toEqual([0, 0]);
    const second = idx.search({ capability: 'storm' });
    expect(second).not.toBe(first);
    expect(second).toEqual(first);
    expect([kept.answers.size, kept.words.size]).toEqual([1, 1]);
    expect(idx.search({ capability: 'storm' })).toBe(second);
    // A word first asked in one question is kept when another brings it back; that question is not.
    idx.search({ capability: 'maps' });
    expect([kept.answers.size, kept.words.size]).toEqual([1, 1]);
    idx.search({ capability: 'maps storm' });
    idx.search({ capability: 'weather maps' });
    expect([kept.answers.size, [...kept.words.keys()].sort()]).toEqual([1, ['maps', 'storm']]);
    expect(ids(idx.search({ capability: 'maps storm' }))).toEqual(ids(new SearchIndexWith([record({ name: 'weather storm' }, 100, 'res_a'), record({ name: 'maps' }, 100, 'res_b')]).search({ capability: 'maps storm' })));
  });
});

/** A fresh index over the given listings: what a restarted process would answer. */
class SearchIndexWith extends SearchIndex {
  constructor(records: ListingRecord[]) {
    super({} as Listings);
    for (const r of records) this.upsert(r);
  }
}

describe('listings whose endpoint pays someone else (ADR 0071, ADR 0080)', () => {
  const scanned = (r: ListingRecord, outcome: string): ListingRecord => ({ ...r, recent_scans: [{ at: 1, status: 402, latency_ms: 5, outcome: outcome as ListingRecord['recent_scans'][number]['outcome'], detail: '' }] });

  it('are held out of every answer while their newest probe says pay_to_mismatch, and come back with a conforming probe', () => {
    const index = new SearchIndex({} as Listings);
    const own = record({ name: 'weather now' }, 100, 'res_own');
    const squatted = record({ name: 'weather now' }, 50, 'res_squat');
    index.upsert(own);
    index.upsert(scanned(squatted, 'pay_to_mismatch'));
    expect(ids(index.search({}))).toEqual(['res_own']);
    expect(ids(index.search({ capability: 'weather' }))).toEqual(['res_own']);
    expect(ids(index.search({ capability: 'weather', asset: 'USDC', maxPrice: '1' }))).toEqual(['res_own']);
    index.upsert(scanned(squatted, 'ok'));
    expect(ids(index.search({ capability: 'weather' })).sort()).toEqual(['res_own', 'res_squat']);
    expect(ids(index.search({}))).toEqual(['res_own', 'res_squat']);
  });
});
