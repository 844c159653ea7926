/* eslint-disable @typescript-eslint/no-unsafe-argument, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-call --
   assertions read parsed JSON response bodies. */
/**
 * Conformance: discovery (marketplace.md "What the service does" 2, "Fee rule" :24,
 * "Endpoints" :90-92; DESIGN §5 "Discovery"), and interop: `@x402/extensions`' Bazaar client,
 * unchanged, lists the marketplace's resources.
 */
import { HTTPFacilitatorClient } from '@x402/core/http';
import { withBazaar } from '@x402/extensions/bazaar';
import { beforeAll, describe, expect, it } from 'vitest';
import { seller, signedListing } from '../fixtures/market.ts';
import { useMarket } from './harness.ts';

const h = useMarket();
const ids: Record<string, string> = {};

beforeAll(async () => {
  const s = seller();
  const make = async (key: string, o: Parameters<typeof signedListing>[1]) => {
    const res = await h.req('POST', '/api/v1/resources', { body: await signedListing(s, o) });
    expect(res.status).toBe(201);
    ids[key] = res.json.resource_id;
  };
  await make('weather', { name: 'Weather forecast', description: 'Hourly weather for any city', category: 'data', tags: ['weather'], price: '0.01' });
  await make('translate', { name: 'Translate', description: 'Translate text between languages', category: 'language', tags: ['nlp', 'translation'], price: '0.02' });
  await make('weatherAnm', { name: 'Storm alerts', description: 'Severe weather alerts', category: 'data', tags: ['weather', 'alerts'], asset: 'ANM', price: '0.5' });
});

describe('GET /api/v1/search (marketplace.md:91, DESIGN §5 Discovery)', () => {
  it('capability words match name, description, category and tags, ranked', async () => {
    const res = await h.req('GET', '/api/v1/search?capability=weather');
    const found = res.json.data.map((r: { resource_id: string }) => r.resource_id);
    expect(found).toEqual(expect.arrayContaining([ids.weather, ids.weatherAnm]));
    expect(found).not.toContain(ids.translate);
    expect(res.json.data[0].relevance).toBeGreaterThanOrEqual(res.json.data[1].relevance);
    const byTag = await h.req('GET', '/api/v1/search?capability=translation');
    expect(byTag.json.data.map((r: { resource_id: string }) => r.resource_id)).toEqual([ids.translate]);
    const byCategory = await h.req('GET', '/api/v1/search?capability=language');
    expect(byCategory.json.data[0].resource_id).toBe(ids.translate);
  });

  it('marketplace.md:24 max_price is a ceiling on the TOTAL: seller 0.01 + fee 0.00005 = 0.01005', async () => {
    const under = await h.req('GET', '/api/v1/search?capability=weather&asset=USDC&max_price=0.010049');
    expect(under.json.data.map((r: { resource_id: string }) => r.resource_id)).not.toContain(ids.weather);
    const at = await h.req('GET', '/api/v1/search?capability=weather&asset=USDC&max_price=0.01005');
    expect(at.json.data.map((r: { resource_id: string }) => r.resource_id)).toEqual([ids.weather]);
  });

  it('limit pages the ranking; has_more says more matched', async () => {
    const all = await h.req('GET', '/api/v1/search?capability=weather');
    expect(all.json.has_more).toBe(false);
    const one = await h.req('GET', '/api/v1/search?capability=weather&limit=1');
    expect(one.json.data).toEqual([all.json.data[0]]);
    expect(one.json.has_more).toBe(true);
  });

  it('asset filters the lane', async () => {
    const anm = await h.req('GET', '/api/v1/search?capability=weather&asset=ANM');
    expect(anm.json.data.map((r: { resource_id: string }) => r.resource_id)).toEqual([ids.weatherAnm]);
  });

  it('records with text outside ASCII come back whole, the same bytes again when asked again', async () => {
    const res = await h.req('POST', '/api/v1/resources', { body: await signedListing(seller(), { name: 'Météo ☀ 天気', description: 'Prévisions « heure par heure »', tags: ['météo'], price: '0.01' }) });
    expect(res.status).toBe(201);
    await h.deps.index.refresh();
    const first = await h.req('GET', '/api/v1/search?capability=m%C3%A9t%C3%A9o');
    expect(first.json.data.map((r: { name: string }) => r.name)).toEqual(['Météo ☀ 天気']);
    expect(first.json.data[0].description).toBe('Prévisions « heure par heure »');
    const again = await h.req('GET', '/api/v1/search?capability=m%C3%A9t%C3%A9o');
    expect(again.json).toEqual(first.json);
  });

  it.each([['asset=BTC'], ['max_price=abc'], ['max_price=-1'], ['limit=0'], ['unknown=1']])('bad query %s → 400 bad_request', async (q) => {
    const res = await h.req('GET', `/api/v1/search?${q}`);
    expect(res.status).toBe(400);
    expect(res.json.error.code).toBe('bad_request');
  });

  it('a listing registered through another process is found after the index catches up, by a query string asked before', async () => {
    // The same query string asked again is answered from what was kept for it only while no listing changed.
    const before = await h.req('GET', '/api/v1/search?capability=geocoder');
    expect(before.json.data).toEqual([]);
    const { Listings } = await import('../../runtime/market/listings.ts');
    const other = new Listings(h.backend.db, h.host);
    const { record } = await other.register(await signedListing(seller(), { name: 'Geocoder', description: 'Addresses to coordinates', tags: ['maps'] }));
    await h.deps.index.refresh();
    const res = await h.req('GET', '/api/v1/search?capability=geocoder');
    expect(res.json.data.map((r: { resource_id: string }) => r.resource_id)).toEqual([record.resource_id]);
  });
});

describe('machine-readable documents (DESIGN §5 Discovery)', () => {
  it('marketplace.md:92 /.well-known/x402-marketplace names fee_bps, both lanes with network ids and schemes, fee addresses', async () => {
    const res = await h.req('GET', '/.well-known/x402-marketplace');
    expect(res.json.fee_bps).toBe(50);
    expect(res.json.lanes).toEqual([
      expect.objectContaining({ asset: 'USDC', network: 'eip155:8453', scheme: 'exact-split', fee_address: h.deps.feeAddresses.USDC }),
      expect.objectContaining({ asset: 'ANM', network: 'native:1', scheme: 'exact-anm-split', fee_address: h.deps.feeAddresses.ANM }),
    ]);
    expect(res.json.endpoints.quote).toBe(`${h.url}/api/v1/route/quote`);
  });

  it('/.well-known/x402 lists every listed endpoint (x402scan shape)', async () => {
    const res = await h.req('GET', '/.well-known/x402');
    expect(res.json.version).toBe(1);
    const listed = await h.req('GET', `/api/v1/resources/${ids.weather}`);
    expect(res.json.resources).toContain(listed.json.endpoint);
  });

  it("@x402/extensions' Bazaar client, unchanged, lists the marketplace's resources with their seller requirements", async () => {
    const client = withBazaar(new HTTPFacilitatorClient({ url: h.url }));
    const page = await client.extensions.bazaar.listResources({ type: 'http', limit: 2, offset: 0 });
    expect(page.x402Version).toBe(2);
    expect(page.items).toHaveLength(2);
    expect(page.pagination.total).toBeGreaterThanOrEqual(3);
    const all = await client.extensions.bazaar.listResources({ type: 'http', limit: 100 });
    const weather = (await h.req('GET', `/api/v1/resources/${ids.weather}`)).json;
    const item = all.items.find((i) => i.resource === weather.endpoint);
    expect(item?.accepts).toEqual([
      { scheme: 'exact', network: 'eip155:8453', asset: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913', amount: '10000', payTo: weather.pricing && weather.accepted_assets[0].pay_to, maxTimeoutSeconds: 300, extra: { name: 'USD Coin', version: '2' } },
    ]);
    const anmOnly = await client.extensions.bazaar.listResources({ network: 'native:1' });
    expect(anmOnly.items.every((i) => i.accepts.some((a) => a.network === 'native:1'))).toBe(true);
  });

  // Issue 20: docs/marketplace.md gives sellers `<marketplace>/facilitator` as the facilitator URL; the same client discovers there.
  it('withBazaar(HTTPFacilitatorClient({url: "<marketplace>/facilitator"})).listResources() reads the same list as at the root', async () => {
    const atFacilitator = withBazaar(new HTTPFacilitatorClient({ url: `${h.url}/facilitator` }));
    const atRoot = withBazaar(new HTTPFacilitatorClient({ url: h.url }));
    for (const params of [{ type: 'http', limit: 1, offset: 1 }, { network: 'native:1' }, {}]) {
      const page = await atFacilitator.extensions.bazaar.listResources(params);
      expect(page).toEqual(await atRoot.extensions.bazaar.listResources(params));
      expect(page.items.length).toBeGreaterThan(0);
    }
  });

  // Issue 20: `extensions` is "Filter by extension key present on the discovered resource" (@x402/extensions ListDiscoveryResourcesParams).
  it.each([['the marketplace root', ''], ['the facilitator URL', '/facilitator']])('listResources() and search() at %s keep only items carrying the extension key asked for', async (_where, path) => {
    const client = withBazaar(new HTTPFacilitatorClient({ url: `${h.url}${path}` }));
    const all = await client.extensions.bazaar.listResources({ limit: 1000 });
    expect(all.items.length).toBeGreaterThan(0);
    const marketplace = await client.extensions.bazaar.listResources({ extensions: 'marketplace', limit: 1000 });
    expect(marketplace).toEqual(all);
    expect(await client.extensions.bazaar.listResources({ extensions: 'bazaar' })).toMatchObject({ items: [], pagination: { total: 0 } });
    expect((await client.extensions.bazaar.search({ query: 'weather', extensions: 'marketplace' })).resources.length).toBeGreaterThan(0);
    expect((await client.extensions.bazaar.search({ query: 'weather', extensions: 'bazaar' })).resources).toEqual([]);
  });

  it.each([['the marketplace root', ''], ['the facilitator URL', '/facilitator']])("search() at %s ranks the capability search's matches as the SDK reads them", async (_where, path) => {
    const client = withBazaar(new HTTPFacilitatorClient({ url: `${h.url}${path}` }));
    const ranked = (await h.req('GET', '/api/v1/search?capability=weather')).json.data.map((r: { endpoint: string }) => r.endpoint);
    const found = await client.extensions.bazaar.search({ query: 'weather' });
    expect(found.x402Version).toBe(2);
    expect(found.resources.map((r) => r.resource)).toEqual(ranked);
    expect(found.resources.every((r) => r.accepts.length > 0 && r.type === 'http')).toBe(true);
    const usdc = await client.extensions.bazaar.search({ query: 'weather', network: 'eip155:8453' });
    expect(usdc.resources.map((r) => r.extensions?.marketplace)).toEqual([expect.objectContaining({ resource_id: ids.weather })]);
    expect((await client.extensions.bazaar.search({ query: 'weather', type: 'mcp' })).resources).toEqual([]);
  });

  it('search() pages with limit and the cursor it answers; the last page answers cursor null', async () => {
    const client = withBazaar(new HTTPFacilitatorClient({ url: `${h.url}/facilitator` }));
    const all = (await client.extensions.bazaar.search({ query: 'weather' })).resources.map((r) => r.resource);
    expect(all.length).toBeGreaterThanOrEqual(2);
    const first = await client.extensions.bazaar.search({ query: 'weather', limit: 1 });
    expect(first.resources.map((r) => r.resource)).toEqual(all.slice(0, 1));
    expect(first.pagination).toEqual({ limit: 1, cursor: '1' });
    const rest = await client.extensions.bazaar.search({ query: 'weather', limit: 100, cursor: first.pagination!.cursor! });
    expect(rest.resources.map((r) => r.resource)).toEqual(all.slice(1));
    expect(rest.pagination?.cursor).toBeNull();
  });

  it.each([['query missing', ''], ['a cursor it never answered', 'query=weather&cursor=abc'], ['limit 0', 'query=weather&limit=0']])('/facilitator/discovery/search with %s → 400 bad_request', async (_name, q) => {
    const res = await h.req('GET', `/facilitator/discovery/search?${q}`);
    expect(res.status).toBe(400);
    expect(res.json.error.code).toBe('bad_request');
  });
});
