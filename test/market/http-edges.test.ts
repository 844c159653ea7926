/* eslint-disable @typescript-eslint/no-unsafe-member-access --
   assertions read parsed JSON response bodies. */
/**
 * The marketplace's HTTP edges, route by route: JSON bodies both ways (marketplace.md:86),
 * no credentials read (marketplace.md:10, :105), the free fragment (marketplace.md:101) and the
 * `/api/v1` prefix (marketplace.md:127). A stock `@x402/express` seller makes routed execution real.
 */
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seller, signedListing, signLeg } from '../fixtures/market.ts';
import { expectBoundary } from '../helpers/boundary.ts';
import type { Res } from '../conformance/harness.ts';
import { FEE_ADDRESSES, useMarket } from './harness.ts';
import { startStockSeller, type StockSeller } from './stock-seller.ts';

const h = useMarket({ forward: { allowPrivate: true, timeoutMs: 10_000 } });
const buyer = privateKeyToAccount(generatePrivateKey());
let shop: StockSeller;
let resource = '';

beforeAll(async () => {
  shop = await startStockSeller(h, buyer, [{ tag: 'parrot', method: 'POST', path: '/echo', handler: (req, res) => void res.json({ echo: req.body as unknown }) }]);
  await h.market.ledger.fund(buyer.address, 10_000_000n);
  resource = (await h.req('GET', '/api/v1/search?capability=parrot')).json.data[0].resource_id as string;
}, 60_000);

afterAll(() => shop?.close());

type Headers = Record<string, string>;
const quote = async (headers: Headers = {}) => h.req('POST', '/api/v1/route/quote', { headers, body: { capability: 'parrot', asset: 'USDC' } });
const intent = async () => (await quote()).json.intent_id as string;
const feeLeg = () => signLeg(buyer, { to: FEE_ADDRESSES.USDC, value: 100n });
const purchase = async (headers: Headers = {}, id?: string) =>
  h.req('POST', '/api/v1/purchase', { headers: { 'idempotency-key': `k_${Math.random()}`, ...headers }, body: { intent_id: id ?? (await intent()), payment: { legs: { seller: await signLeg(buyer, { to: shop.s.evm.address, value: 20_000n }), fee: await feeLeg() } } } });
const execute = async (headers: Headers = {}, id?: string) =>
  h.req('POST', '/api/v1/route/execute', { headers, body: { intent_id: id ?? (await intent()), fee_payment: { legs: { fee: await feeLeg() } }, seller_payment: await shop.header('/echo', 'POST'), body: { say: 'hi' } } });
const listing = async () => h.req('POST', '/api/v1/resources', { body: await signedListing(seller(), { name: 'Edge listing' }) });

/** One success and one refusal of every route the marketplace serves. */
const ROUTES: Array<[string, () => Promise<Res>, () => Promise<Res>]> = [
  ['GET /api/v1/resources', () => h.req('GET', '/api/v1/resources'), () => h.req('GET', '/api/v1/resources?limit=0')],
  ['GET /api/v1/resources/{id}', () => h.req('GET', `/api/v1/resources/${resource}`), () => h.req('GET', '/api/v1/resources/res_00')],
  ['GET /api/v1/resources/{id}/fragment', () => h.req('GET', `/api/v1/resources/${resource}/fragment`), () => h.req('GET', '/api/v1/resources/res_00/fragment')],
  ['POST /api/v1/resources', listing, () => h.req('POST', '/api/v1/resources', { body: { name: 'unsigned' } })],
  ['GET /api/v1/search', () => h.req('GET', '/api/v1/search?capability=parrot'), () => h.req('GET', '/api/v1/search?asset=BTC')],
  ['GET /.well-known/x402-marketplace', () => h.req('GET', '/.well-known/x402-marketplace'), () => h.req('DELETE', '/.well-known/x402-marketplace')],
  ['GET /.well-known/x402', () => h.req('GET', '/.well-known/x402'), () => h.req('DELETE', '/.well-known/x402')],
  ['GET /discovery/resources', () => h.req('GET', '/discovery/resources?type=http'), () => h.req('GET', '/discovery/resources?limit=0')],
  ['GET /discovery/search', () => h.req('GET', '/discovery/search?query=parrot'), () => h.req('GET', '/discovery/search')],
  ['POST /api/v1/route/quote', () => quote(), () => h.req('POST', '/api/v1/route/quote', { body: { capability: 'nothing-listed-here', asset: 'USDC' } })],
  ['POST /api/v1/purchase', () => purchase(), () => h.req('POST', '/api/v1/purchase', { body: { intent_id: 'pi_0' } })],
  ['POST /api/v1/route/execute', () => execute(), () => h.req('POST', '/api/v1/route/execute', { body: { intent_id: 'pi_0', seller_payment: 'x' } })],
  ['GET /api/v1/purchases/{id}', async () => h.req('GET', `/api/v1/purchases/${await intent()}`), () => h.req('GET', '/api/v1/purchases/pi_0')],
  ['GET /facilitator/supported', () => h.req('GET', '/facilitator/supported'), () => h.req('POST', '/facilitator/verify', { body: '{' })],
];

describe('marketplace.md:86 "Bodies are JSON with content-type: application/json"', () => {
  it.each(ROUTES)('%s: its success and its refusal are application/json', async (name, ok, refused) => {
    const good = await ok();
    expect(good.status, `${name} ${good.text.slice(0, 200)}`).toBeLessThan(300);
    expect(good.headers['content-type'], name).toMatch(/^application\/json/);
    expect(() => JSON.parse(good.text) as unknown).not.toThrow();
    const bad = await refused();
    expect(bad.status, `${name} ${bad.text.slice(0, 200)}`).toBeGreaterThanOrEqual(400);
    expect(bad.headers['content-type'], name).toMatch(/^application\/json/);
    expectBoundary(bad, name);
  });

  it.each([
    ['POST /api/v1/route/quote', '/api/v1/route/quote', async () => ({ capability: 'parrot', asset: 'USDC' })],
    ['POST /api/v1/purchase', '/api/v1/purchase', async () => ({ intent_id: await intent(), payment: { legs: { seller: await signLeg(buyer, { to: shop.s.evm.address, value: 20_000n }), fee: await feeLeg() } } })],
    ['POST /api/v1/route/execute', '/api/v1/route/execute', async () => ({ intent_id: await intent(), fee_payment: { legs: { fee: await feeLeg() } }, seller_payment: await shop.header('/echo', 'POST') })],
  ])('%s: a valid body sent as text/plain is 400 invalid_json (docs/errors.md "not sent as application/json"), nothing forwarded', async (_name, path, make) => {
    const body = await make();
    const calls = shop.requests['/echo'] ?? 0;
    const r = await h.req('POST', path, { headers: { 'content-type': 'text/plain', 'idempotency-key': `k_${Math.random()}` }, body: JSON.stringify(body) });
    expect([r.status, r.json.error?.code], r.text).toEqual([400, 'invalid_json']);
    expect(shop.requests['/echo'] ?? 0).toBe(calls);
    if ('intent_id' in body) expect((await h.req('GET', `/api/v1/purchases/${body.intent_id}`)).json.status).toBe('QUOTED');
  });
});

describe('marketplace.md:10, :105 "No API keys are used": a credential sent anyway changes nothing', () => {
  const BOGUS: Headers[] = [{ authorization: 'Bearer x' }, { 'x-api-key': 'x' }, { authorization: 'Basic eDp4' }];
  /** The answer without what differs between two calls (ids, times). */
  const shape = (r: Res) => ({ status: r.status, type: r.headers['content-type'], code: r.json?.error?.code as unknown, status_field: r.json?.status as unknown, price: r.json?.price as unknown });

  it.each(BOGUS)('discovery with %o answers the same bytes', async (headers) => {
    for (const path of ['/api/v1/resources', `/api/v1/resources/${resource}/fragment`, '/api/v1/search?capability=parrot', '/.well-known/x402-marketplace', '/discovery/resources']) {
      // Between two plain reads, as an earlier execution's settlement may move a listing's analytics meanwhile.
      const [before, withKey, after] = [await h.req('GET', path), await h.req('GET', path, { headers }), await h.req('GET', path)];
      expect(withKey.status, path).toBe(before.status);
      expect([before.text, after.text], path).toContain(withKey.text);
    }
  });

  it.each(BOGUS)('quote, purchase, execute and listing with %o: served as without, refused as without', async (headers) => {
    const cases: Array<[string, (hd: Headers) => Promise<Res>]> = [
      ['quote', (hd) => quote(hd)],
      ['purchase', (hd) => purchase(hd)],
      ['execute', (hd) => execute(hd)],
      ['purchase of an unknown intent', (hd) => purchase(hd, 'pi_0')],
      ['execute of an unknown intent', (hd) => execute(hd, 'pi_0')],
      ['listing', async (hd) => h.req('POST', '/api/v1/resources', { headers: hd, body: await signedListing(seller(), { name: 'Keyless listing' }) })],
    ];
    for (const [name, call] of cases) {
      const [plain, withKey] = [await call({}), await call(headers)];
      expect(shape(withKey), name).toEqual(shape(plain));
    }
  });
});

describe('marketplace.md:101 the fragment is free; marketplace.md:127 routes sit under /api/v1', () => {
  it('reading a fragment creates no purchase, moves no balance and never calls the seller', async () => {
    const pis = async () => (await h.backend.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM actors WHERE id LIKE 'pi\\_%'`)).rows[0]!.n;
    const balances = async () => Promise.all([FEE_ADDRESSES.USDC, shop.s.evm.address, buyer.address].map((a) => h.market.ledger.balanceOf(a)));
    const [actors, before, calls] = [await pis(), await balances(), { ...shop.requests }];
    for (let i = 0; i < 3; i++) {
      const f = await h.req('GET', `/api/v1/resources/${resource}/fragment`);
      expect(f.status).toBe(200);
      expect(f.json.endpoint).toBe(`${shop.base}/echo`);
    }
    expect(await pis()).toBe(actors);
    expect(await balances()).toEqual(before);
    expect(shop.requests).toEqual(calls);
  });

  it.each([
    ['GET', '/search?capability=parrot'],
    ['GET', '/api/v2/search?capability=parrot'],
    ['GET', '/resources'],
    ['GET', '/v1/resources'],
    ['GET', '/api/search?capability=parrot'],
    ['POST', '/route/quote'],
    ['POST', '/api/v2/route/quote'],
    ['POST', '/purchase'],
    ['POST', '/route/execute'],
  ])('%s %s → 404 not_found in the error envelope', async (method, path) => {
    const r = await h.req(method, path, method === 'POST' ? { body: { capability: 'parrot', asset: 'USDC' } } : {});
    expect([r.status, r.json?.error?.code], r.text).toEqual([404, 'not_found']);
    expect(r.headers['content-type']).toMatch(/^application\/json/);
    expectBoundary(r, path);
  });
});
