/**
 * The search route's bodies (ADR 0061): a question's first answer is written as a string and
 * its later ones as the kept bytes; both are, byte for byte, the plain JSON encoding of the
 * page (the records, each with its relevance, and `has_more`), text outside ASCII included.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ListingContext } from '../../machines/listing/context.ts';
import { listingRecord } from '../../machines/listing/view.ts';
import type { Listings } from '../../runtime/market/listings.ts';
import { SearchIndex } from '../../runtime/market/search-index.ts';
import { searchAnswers } from './search.ts';

const WORDS = ['weather', 'météo', '天気', 'translate', 'geocode', 'news', 'ocr', '42', '7'];

function index(n: number): SearchIndex {
  const ix = new SearchIndex({} as Listings);
  for (let i = 0; i < n; i++) {
    const w = WORDS[i % WORDS.length]!;
    const ctx = {
      resource_id: `res_${i}`, provider_id: 'prov_01', name: `${w} service ${i}`, description: `« ${w} » number ${i % 13}`, category: w, tags: [w, `t${i % 5}`],
      endpoint: `https://s${i}.example/api`, method: 'GET', model: 'per_call',
      assets: [
        { asset: 'USDC', pay_to: '0x0000000000000000000000000000000000000001', seller_price_atomic: String(10_000 + ((i * 37) % 500)) },
        { asset: 'ANM', pay_to: 'anm1seller', seller_price_atomic: String(1_000_000 + i) },
      ],
      documentation_url: null, request_schema: null, response_schema: null, example_request: null, example_response: null, created_at: 0, scans: [], transactions: 0,
    } as unknown as ListingContext;
    ix.upsert(listingRecord(ctx, 'unverified'));
  }
  return ix;
}

const bytes = (b: Buffer | string): Buffer => (typeof b === 'string' ? Buffer.from(b) : b);

describe('search bodies', () => {
  it('first and later answers are the same bytes, the plain JSON of the page', () => {
    const ix = index(60);
    const answer = searchAnswers(ix);
    const question = fc.record({
      words: fc.array(fc.constantFrom(...WORDS, 'service', 'number', 't3', 'wether', 'zzz'), { minLength: 1, maxLength: 3 }),
      maxPrice: fc.option(fc.constantFrom('0.0101', '0.0103', '1', '0.000001'), { nil: undefined }),
      asset: fc.option(fc.constantFrom('USDC', 'ANM'), { nil: undefined }),
      limit: fc.integer({ min: 1, max: 12 }),
    });
    fc.assert(
      fc.property(question, (q) => {
        const query = { capability: q.words.join(' '), limit: String(q.limit), ...(q.maxPrice && { max_price: q.maxPrice }), ...(q.asset && { asset: q.asset }) };
        const url = `/api/v1/search?${new URLSearchParams(query).toString()}`;
        const hits = ix.search({ capability: query.capability, maxPrice: q.maxPrice, asset: q.asset, limit: q.limit + 1 });
        const page = hits.slice(0, q.limit).map((h) => ({ ...h.record, relevance: h.score }));
        const expected = Buffer.from(JSON.stringify({ object: 'list', data: page, has_more: hits.length > q.limit }));
        // Three asks: the first answer, the one that keeps the bytes, and one from the kept bytes.
        for (let i = 0; i < 3; i++) expect(bytes(answer(url, query)).equals(expected)).toBe(true);
      }),
      { numRuns: 200 },
    );
  });

  it('a query string asked once is not kept; from its second ask its answer is (ADR 0065)', () => {
    const ix = index(20);
    let asked = 0;
    const search = ix.search.bind(ix);
    ix.search = (q) => (asked++, search(q));
    const answer = searchAnswers(ix);
    const url = '/api/v1/search?capability=weather&limit=3';
    const first = bytes(answer(url, { capability: 'weather', limit: '3' }));
    expect(asked).toBe(1);
    expect(bytes(answer(url, { capability: 'weather', limit: '3' })).equals(first)).toBe(true);
    expect(asked).toBe(2);
    const kept = answer(url, { capability: 'weather', limit: '3' });
    expect(asked).toBe(2);
    expect(Buffer.isBuffer(kept) && kept.equals(first)).toBe(true);
  });
});
