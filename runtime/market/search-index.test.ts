/** The search index's kept answers: a listing's change is seen by the next search, an unchanged catch-up keeps them. */
import { describe, expect, it } from 'vitest';
import type { ListingContext } from '../../machines/listing/context.ts';
import { listingRecord, type ListingRecord } from '../../machines/listing/view.ts';
import { SearchIndex } from './search-index.ts';
import type { Listings } from './listings.ts';

function record(name: string, sellerAtomic: number, id = 'res_01'): ListingRecord {
  const ctx = {
    resource_id: id, provider_id: 'prov_01', name, description: '', category: '', tags: [], endpoint: 'https://s.example/a', method: 'GET', model: 'per_call',
    assets: [{ asset: 'USDC', pay_to: '0x0000000000000000000000000000000000000001', seller_price_atomic: String(sellerAtomic) }],
    documentation_url: null, request_schema: null, response_schema: null, example_request: null, example_response: null, created_at: 0, scans: [], transactions: 0,
  } as unknown as ListingContext;
  return listingRecord(ctx, 'unverified');
}

describe('SearchIndex answers', () => {
  it('a new or changed listing is seen by the very next search; an unchanged one keeps the kept answer', () => {
    const idx = new SearchIndex({} as Listings);
    expect(idx.search({ capability: 'geocode', maxPrice: '0.02' })).toEqual([]);
    idx.upsert(record('geocode service', 10_000));
    const first = idx.search({ capability: 'geocode', maxPrice: '0.02' });
    expect(first.map((h) => h.record.resource_id)).toEqual(['res_01']);
    idx.upsert(record('geocode service', 10_000));
    expect(idx.search({ capability: 'geocode', maxPrice: '0.02' })).toBe(first);
    // Seller price 0.02 → total 0.0201: over the ceiling now.
    idx.upsert(record('geocode service', 20_000));
    expect(idx.search({ capability: 'geocode', maxPrice: '0.02' })).toEqual([]);
    expect(idx.search({ capability: 'geocode', maxPrice: '0.0201' })).toHaveLength(1);
    // A ceiling with more places than USDC has meets nothing; the limit stops early.
    expect(idx.search({ capability: 'geocode', maxPrice: '0.0201001' })).toEqual([]);
    idx.upsert(record('geocode two', 1, 'res_02'));
    expect(idx.search({ capability: 'geocode', limit: 1 })).toHaveLength(1);
    expect(idx.search({ capability: 'geocode' })).toHaveLength(2);
  });
});
