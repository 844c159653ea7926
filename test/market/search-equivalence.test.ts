/**
 * `GET /api/v1/search`'s answers (ADR 0096: a word's scores without MiniSearch's wrapping, a
 * word no listing holds left out of the question, the query string checked by hand, records'
 * JSON written when indexed) are byte for byte what the plain computation gives: the query
 * checked by its zod schema, each word scored by MiniSearch's own `search`, each listing's
 * words summed as the ranking specifies (marketplace.md "Search"; ADR 0035: fewest-hit word
 * first, times how many distinct words it holds), filtered by asset and total ceiling, ties
 * by age, the page and `has_more`, every record JSON-encoded. Over an index of 3,000 listings
 * built as bench:market builds them, with generated query strings (valid and not; known, new,
 * mistyped and prefix words) asked again and again while listings' prices change.
 */
import { parse } from 'node:querystring';
import fc from 'fast-check';
import MiniSearch from 'minisearch';
import { describe, expect, it } from 'vitest';
import { searchAnswers, searchQuery } from '../../gateway/market/search.ts';
import { parseQuery } from '../../gateway/market/query.ts';
import type { ListingContext } from '../../machines/listing/context.ts';
import { listingRecord, type ListingRecord } from '../../machines/listing/view.ts';
import { parseCeiling, type MarketAsset } from '../../machines/money/market.ts';
import type { Listings } from '../../runtime/market/listings.ts';
import { queryWords, SEARCH_FIELDS, SearchIndex, wordOptions } from '../../runtime/market/search-index.ts';

const LISTINGS = 3_000;
const WORDS = ['weather', 'translate', 'geocode', 'sentiment', 'images', 'stocks', 'news', 'ocr', 'speech', 'search'];

function record(i: number, word: string, price: number): ListingRecord {
  const ctx = {
    resource_id: `res_${i}`, provider_id: 'prov_b0b0', name: `${word} service ${i}`, description: `A ${word} API number ${i}`, category: word, tags: [word, `t${i % 97}`],
    endpoint: `https://seller${i}.example/api`, method: 'GET', model: 'per_call',
    assets: [
      { asset: 'USDC', pay_to: '0x00000000000000000000000000000000000b0b00', seller_price_atomic: String(price) },
      { asset: 'ANM', pay_to: 'anm1seller', seller_price_atomic: String(500_000_000 + i) },
    ],
    documentation_url: null, request_schema: null, response_schema: null, example_request: null, example_response: null, created_at: 0, scans: [], transactions: 0,
  } as unknown as ListingContext;
  return listingRecord(ctx, 'unverified');
}

/** MiniSearch over the listings' words, as the index is given them. */
function miniOf(records: ListingRecord[]): MiniSearch {
  const mini = new MiniSearch({ fields: SEARCH_FIELDS, idField: 'id' });
  mini.addAll(records.map((r) => ({ id: r.resource_id, name: r.name, description: r.description, category: r.category, tags: r.tags.join(' ') })));
  return mini;
}

/** The plain computation over `records` (in the order first indexed), from the parsed query to the body. */
function plainAnswer(records: ListingRecord[], mini: MiniSearch, query: unknown): string {
  const q = parseQuery(searchQuery, query);
  const words = q.capability?.trim() ? queryWords(q.capability) : null;
  const slot = new Map(records.map((r, i) => [r.resource_id, i]));
  let ranked: Array<{ slot: number; score: number }>;
  if (words === null) ranked = records.map((_, i) => ({ slot: i, score: 0 }));
  else {
    const times = new Map<string, number>();
    for (const w of words) times.set(w, (times.get(w) ?? 0) + 1);
    const scored = [...times].map(([w, n]) => ({ n, scores: new Map(mini.search(w, wordOptions(w)).map((h) => [slot.get(h.id as string)!, h.score])) }));
    scored.sort((a, b) => a.scores.size - b.scores.size);
    ranked = [];
    for (let s = 0; s < records.length; s++) {
      let sum = 0;
      let held = 0;
      for (const { n, scores } of scored) {
        const v = scores.get(s);
        if (v !== undefined) {
          sum += n * v;
          held++;
        }
      }
      if (held) ranked.push({ slot: s, score: sum * held });
    }
    ranked.sort((a, b) => b.score - a.score || a.slot - b.slot);
  }
  const passing = ranked.filter(({ slot: s }) => passes(records[s]!, q.max_price, q.asset));
  const page = passing.slice(0, q.limit).map((h) => ({ ...records[h.slot]!, relevance: h.score }));
  return JSON.stringify({ object: 'list', data: page, has_more: passing.length > q.limit });
}

function passes(r: ListingRecord, maxPrice: string | undefined, asset: MarketAsset | undefined): boolean {
  return r.accepted_assets.some((a) => {
    if (asset !== undefined && a.asset !== asset) return false;
    if (maxPrice === undefined) return true;
    const c = parseCeiling(a.asset, maxPrice);
    return c !== null && BigInt(a.total_price_atomic) <= c;
  });
}

const capabilityWord = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...WORDS, 'service', 'api', 'Weather', 'NEWS', 't17', 't5') },
  { weight: 3, arbitrary: fc.nat(3_500).map(String) },
  { weight: 3, arbitrary: fc.nat(40_000).map((n) => `p${n}`) },
  { weight: 2, arbitrary: fc.constantFrom('wexther', 'weathr', 'tanslate', 'geocod', 'we', 'ne', 'naïve', 'zzz', '1', 'p') },
  { weight: 1, arbitrary: fc.stringMatching(/^[a-z0-9]{1,8}$/) },
);
const capability = fc.oneof(
  { weight: 8, arbitrary: fc.tuple(fc.array(capabilityWord, { minLength: 1, maxLength: 4 }), fc.constantFrom(' ', '  ', ', ', '-')).map(([w, sep]) => w.join(sep)) },
  { weight: 1, arbitrary: fc.constantFrom('', '   ', '!!!', 'a '.repeat(251)) },
);
const field = <T>(a: fc.Arbitrary<T>) => fc.option(a, { nil: undefined, freq: 2 });
const queryString = fc.record({
  capability: field(capability),
  max_price: field(fc.constantFrom('0.02', '0.0105', '0.011', '0.6', '1', '0.0100501', '0.000000001', '0', '-1', 'abc', '1e3', '')),
  asset: field(fc.constantFrom('USDC', 'ANM', 'usdc', 'BTC')),
  limit: field(fc.constantFrom('1', '3', '10', '50', '100', '101', '0', '010', ' 5', '5.0', 'abc')),
  extra: fc.constantFrom<Array<[string, string]>>([], [], [], [], [['foo', '1']], [['limit', '2']], [['capability', 'news']]),
});

function urlOf(q: { capability?: string | undefined; max_price?: string | undefined; asset?: string | undefined; limit?: string | undefined; extra: Array<[string, string]> }): string {
  const p = new URLSearchParams();
  for (const k of ['capability', 'max_price', 'asset', 'limit'] as const) if (q[k] !== undefined) p.append(k, q[k]);
  for (const [k, v] of q.extra) p.append(k, v);
  return `/api/v1/search?${p.toString()}`;
}

const outcome = (f: () => Buffer | string): string => {
  try {
    return String(f());
  } catch (err) {
    return `refused: ${(err as Error).name} ${(err as { code?: string }).code} ${(err as Error).message}`;
  }
};

describe('search answers against the plain computation (ADR 0096)', () => {
  it('are the same bytes, or the same refusal, for generated query strings over 3,000 listings while listings change', () => {
    const records = Array.from({ length: LISTINGS }, (_, i) => record(i, WORDS[i % WORDS.length]!, 10_000 + (i % 1000)));
    const index = new SearchIndex({} as Listings);
    for (const r of records) index.upsert(r);
    const answer = searchAnswers(index);
    const mini = miniOf(records);
    // A listing's new price (its words are kept: re-ranking on new words is search-index.test.ts's).
    const change = fc.record({ at: fc.nat(LISTINGS - 1), price: fc.integer({ min: 9_000, max: 12_000 }) });
    const step = fc.oneof({ weight: 12, arbitrary: queryString.map((q) => ({ ask: q })) }, { weight: 1, arbitrary: change.map((c) => ({ change: c })) });
    fc.assert(
      fc.property(fc.array(step, { minLength: 1, maxLength: 12 }), (steps) => {
        for (const s of steps) {
          if ('change' in s) {
            const r = record(s.change.at, WORDS[s.change.at % WORDS.length]!, s.change.price);
            records[s.change.at] = r;
            index.upsert(r);
            continue;
          }
          const url = urlOf(s.ask);
          const query = parse(url.slice(url.indexOf('?') + 1));
          const want = outcome(() => plainAnswer(records, mini, query));
          // Asked up to three times: the first answer, the kept one, the kept bytes.
          for (let i = 0; i < 3; i++) expect(outcome(() => answer(url, query))).toBe(want);
        }
      }),
      { numRuns: 120, seed: Number(process.env.FC_SEED ?? Date.now() % 1e9) },
    );
  });
});
