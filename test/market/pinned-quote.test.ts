/* eslint-disable @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-argument --
   assertions read parsed JSON response bodies. */
/**
 * A quote pinned to one listing by `resource_id` (ADR 0085): the listing the buyer found
 * through search or its fragment, not the capability's best match, under the same ceilings
 * and refusals. Offline and pay_to_mismatch listings: uncallable-listings.test.ts.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { seller, signedListing } from '../fixtures/market.ts';
import { useMarket } from './harness.ts';

const h = useMarket();
const ids = { best: '', other: '' };

beforeAll(async () => {
  const make = async (o: Parameters<typeof signedListing>[1]) => {
    const res = await h.req('POST', '/api/v1/resources', { body: await signedListing(seller(), o) });
    expect(res.status).toBe(201);
    return res.json.resource_id as string;
  };
  // The word in the name and the tags ranks `best` first; `other` is dearer and names it once.
  ids.best = await make({ name: 'Pinquote tides', tags: ['pinquote'], price: '0.01' });
  ids.other = await make({ name: 'Harbour almanac', description: 'pinquote tables', tags: ['almanac'], price: '0.02', also: { asset: 'ANM', price: '0.5' } });
});

const quote = (body: Record<string, unknown>) => h.req('POST', '/api/v1/route/quote', { body });

describe('POST /api/v1/route/quote with resource_id', () => {
  it('quotes the named listing, not the capability\'s best match; the capability is not read', async () => {
    expect((await quote({ capability: 'pinquote', asset: 'USDC' })).json.resource.resource_id).toBe(ids.best);
    for (const body of [{ resource_id: ids.other }, { resource_id: ids.other, capability: 'pinquote' }, { resource_id: ids.other, capability: 'no such words' }]) {
      const q = await quote(body);
      expect([q.status, q.json.status, q.json.resource.resource_id, q.json.price.total_price]).toEqual([201, 'QUOTED', ids.other, '0.020100']);
    }
    const anm = await quote({ resource_id: ids.other, asset: 'ANM', max_price: '0.5025' });
    expect([anm.status, anm.json.resource.resource_id, anm.json.price.asset]).toEqual([201, ids.other, 'ANM']);
  });

  it('keeps max_price and asset as ceilings: over them is 404 no_matching_resource, saying why', async () => {
    expect((await quote({ resource_id: ids.other, max_price: '0.020100' })).status).toBe(201);
    const dear = await quote({ resource_id: ids.other, max_price: '0.020099', asset: 'USDC' });
    expect([dear.status, dear.json.error.code]).toEqual([404, 'no_matching_resource']);
    expect(dear.json.error.message).toContain('over max_price 0.020099');
    // The capability's best match is under that ceiling, and still not quoted in its place.
    expect((await quote({ capability: 'pinquote', max_price: '0.020099' })).json.resource.resource_id).toBe(ids.best);
    const asset = await quote({ resource_id: ids.best, asset: 'ANM' });
    expect([asset.status, asset.json.error.code]).toEqual([404, 'no_matching_resource']);
    expect(asset.json.error.message).toContain('does not accept ANM');
  });

  it('an unknown resource_id is 404 not_found; a malformed one, or neither it nor a capability, 400 invalid_body', async () => {
    const unknown = await quote({ resource_id: `res_${'0'.repeat(32)}`, capability: 'pinquote' });
    expect([unknown.status, unknown.json.error.code]).toEqual([404, 'not_found']);
    for (const body of [{ resource_id: 'nope' }, { resource_id: `res_${'a'.repeat(65)}` }, { resource_id: 'res_ABC' }, { resource_id: 7 }, {}, { capability: '  ' }, { max_price: '1' }]) {
      const r = await quote(body);
      expect([r.status, r.json.error.code]).toEqual([400, 'invalid_body']);
    }
  });

  it('quotes a listing the index has not caught up with yet (registered through another process)', async () => {
    // Stored, but not put in this process's index as the route would.
    const { record } = await h.deps.listings.register(await signedListing(seller(), { name: 'Pinquote elsewhere', tags: ['pinquote'] }));
    const q = await quote({ resource_id: record.resource_id });
    expect([q.status, q.json.resource.resource_id]).toEqual([201, record.resource_id]);
  });

  it('the fragment\'s quote body quotes the listing the fragment is of', async () => {
    for (const id of [ids.best, ids.other]) {
      const frag = (await h.req('GET', `/api/v1/resources/${id}/fragment`)).json;
      expect(frag.how_to_pay.quote.body.resource_id).toBe(id);
      const { method, url, body } = frag.how_to_pay.quote;
      const q = await h.req(method, new URL(url).pathname, { body });
      expect([q.status, q.json.resource.resource_id, q.json.price.total_price]).toEqual([201, id, frag.pricing.total_price]);
    }
  });
});
