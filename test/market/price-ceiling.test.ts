/* eslint-disable @typescript-eslint/no-unsafe-member-access --
   assertions read parsed JSON response bodies. */
/**
 * Conformance: `max_price` in a search and a quote (marketplace.md "Limits": "max_price is a
 * ceiling on the total price"; :24 the ceiling is the TOTAL). With an asset named the ceiling
 * is in its units and may not have more places than it has (400). With none it is a value,
 * compared in each asset's units: USDC floors a ceiling given with 7 to 9 places (an integer
 * total is under 1.0000001 exactly when it is under 1.000000), ANM compares all 9; more than
 * 9 places is 400. A quote with no asset is in USDC and reads its ceiling the same way.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { seller, signedListing } from '../fixtures/market.ts';
import { useMarket } from './harness.ts';

const h = useMarket();
const ids = { usdc: '', anm: '' };
// Seller 0.01 USDC + fee 0.00005 = 0.010050; seller 0.5 ANM + fee 0.0025 = 0.502500000.
const USDC_TOTAL = '0.010050';
const ANM_TOTAL = '0.502500000';

beforeAll(async () => {
  const make = async (o: Parameters<typeof signedListing>[1]) => {
    const res = await h.req('POST', '/api/v1/resources', { body: await signedListing(seller(), o) });
    expect(res.status).toBe(201);
    expect(res.json.pricing.total_price).toBe(o?.asset === 'ANM' ? ANM_TOTAL : USDC_TOTAL);
    return res.json.resource_id as string;
  };
  ids.usdc = await make({ name: 'Ceiling probe', tags: ['ceilingprobe'], price: '0.01' });
  ids.anm = await make({ name: 'Ceiling probe ANM', tags: ['ceilingprobe'], asset: 'ANM', price: '0.5' });
});

const found = async (query: string): Promise<string[] | string> => {
  const r = await h.req('GET', `/api/v1/search?capability=ceilingprobe&${query}`);
  if (r.status !== 200) return `${r.status} ${r.json.error.code}`;
  return (r.json.data as Array<{ resource_id: string }>).map((x) => (x.resource_id === ids.usdc ? 'usdc' : x.resource_id === ids.anm ? 'anm' : x.resource_id)).sort();
};

describe('GET /api/v1/search max_price (marketplace.md "max_price is a ceiling on the total price")', () => {
  it.each<[string, string[] | string]>([
    // No asset: USDC at its 6 places, equal and one unit either side.
    ['max_price=0.010050', ['usdc']],
    ['max_price=0.010049', []],
    ['max_price=0.010051', ['usdc']],
    // More places than USDC has: floored to its unit, so the same answers by value.
    ['max_price=0.010050000', ['usdc']],
    ['max_price=0.0100499', []],
    ['max_price=0.0100509', ['usdc']],
    // ANM compares all 9 places: equal and one nANM either side.
    ['max_price=0.502500000', ['anm', 'usdc']],
    ['max_price=0.502499999', ['usdc']],
    ['max_price=0.502500001', ['anm', 'usdc']],
    ['max_price=1.000000000', ['anm', 'usdc']],
    ['max_price=1.0000001', ['anm', 'usdc']],
    // Under one USDC unit: no USDC price is that low.
    ['max_price=0.0000009', []],
    ['max_price=0.0100500001', '400 bad_request'],
    ['max_price=0.000000000', '400 bad_request'],
    // An asset named: its own places, no more.
    ['asset=USDC&max_price=0.010050', ['usdc']],
    ['asset=USDC&max_price=0.010049', []],
    ['asset=USDC&max_price=1.000000000', '400 bad_request'],
    ['asset=USDC&max_price=1.0000001', '400 bad_request'],
    ['asset=ANM&max_price=0.502500000', ['anm']],
    ['asset=ANM&max_price=0.502499999', []],
    ['asset=ANM&max_price=0.5025000001', '400 bad_request'],
  ])('%s → %j', async (query, want) => {
    expect(await found(query)).toEqual(want);
  });
});

describe('POST /api/v1/route/quote max_price (marketplace.md "max_price is a ceiling on the total price")', () => {
  const quote = async (body: Record<string, unknown>): Promise<string> => {
    const r = await h.req('POST', '/api/v1/route/quote', { body: { capability: 'ceilingprobe', ...body } });
    return r.status === 201 ? `201 ${r.json.price.asset} ${r.json.price.total_price}` : `${r.status} ${r.json.error.code}`;
  };
  it.each<[Record<string, unknown>, string]>([
    // No asset: a USDC quote, the ceiling read by value as in a search.
    [{ max_price: '0.010050' }, `201 USDC ${USDC_TOTAL}`],
    [{ max_price: '0.010049' }, '404 no_matching_resource'],
    [{ max_price: '0.010051' }, `201 USDC ${USDC_TOTAL}`],
    [{ max_price: '0.0100499' }, '404 no_matching_resource'],
    [{ max_price: '0.0100501' }, `201 USDC ${USDC_TOTAL}`],
    [{ max_price: '1.000000000' }, `201 USDC ${USDC_TOTAL}`],
    [{ max_price: '1.0000001' }, `201 USDC ${USDC_TOTAL}`],
    [{ max_price: '0.0000009' }, '404 no_matching_resource'],
    [{ max_price: '0.0100500001' }, '400 invalid_body'],
    // An asset named: its own places, no more.
    [{ asset: 'USDC', max_price: '0.010050' }, `201 USDC ${USDC_TOTAL}`],
    [{ asset: 'USDC', max_price: '1.000000000' }, '400 invalid_body'],
    [{ asset: 'USDC', max_price: '1.0000001' }, '400 invalid_body'],
    [{ asset: 'ANM', max_price: '0.502500000' }, `201 ANM ${ANM_TOTAL}`],
    [{ asset: 'ANM', max_price: '0.502499999' }, '404 no_matching_resource'],
    [{ asset: 'ANM', max_price: '0.5025000001' }, '400 invalid_body'],
  ])('%j → %s', async (body, want) => {
    expect(await quote(body)).toBe(want);
  });
});
