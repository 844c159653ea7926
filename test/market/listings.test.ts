/* eslint-disable @typescript-eslint/no-unsafe-argument, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-call --
   assertions read parsed JSON response bodies. */
/**
 * Conformance: listings (marketplace.md "Listing (resource record)", "Pricing object",
 * "Endpoints"; DESIGN §5 "Listings"). Each test names the spec line it checks.
 */
import { describe, expect, it } from 'vitest';
import { listingFields, seller, signListing, signedListing } from '../fixtures/market.ts';
import { useMarket } from './harness.ts';

const h = useMarket();

const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
/** The next character of the alphabet: same high bits, so a lax decoder reads the same bytes when the low bits are unused. */
const nextB64Char = (c: string): string => B64[B64.indexOf(c) + 1]!;

/** A signed ANM listing with one base64 field of its signature re-spelled. */
async function anmRespelled(respell: (b64: string) => string, field: 'public_key' | 'signature'): Promise<Record<string, unknown>> {
  const s = seller();
  const b = await signListing(s, listingFields(s, { asset: 'ANM' }));
  const sig = (b.signatures as { ANM: Record<string, string> }).ANM;
  const respelled = respell(sig[field]!);
  // Same bytes as far as Node is concerned: the test is about the spelling alone.
  expect(Buffer.from(respelled, 'base64').equals(Buffer.from(sig[field]!, 'base64'))).toBe(true);
  expect(respelled).not.toBe(sig[field]);
  return { ...b, signatures: { ANM: { ...sig, [field]: respelled } } };
}
const NULLABLE_OBJECTS = ['request_schema', 'response_schema', 'example_request', 'example_response', 'score_breakdown'];

describe('POST /api/v1/resources (DESIGN §5 Listings)', () => {
  it('marketplace.md:39-62 a USDC listing signed by its pay_to key: every field of the record, with its type', async () => {
    const s = seller();
    const res = await h.req('POST', '/api/v1/resources', { body: await signedListing(s, { price: '0.01' }) });
    expect(res.status).toBe(201);
    const r = res.json;
    expect(r.resource_id).toMatch(/^res_[0-9a-f]+$/); // :41
    expect(r.provider_id).toMatch(/^prov_[0-9a-f]+$/); // :42
    for (const f of ['name', 'description', 'category', 'endpoint', 'method', 'score_label']) expect(typeof r[f], f).toBe('string');
    expect(r.tags).toEqual(['weather', 'forecast']); // :46
    expect(r.status).toBe('unverified'); // :51, :82
    expect(r.x402_score).toBeNull(); // :52
    expect(r.score_label).toBe('insufficient_data'); // :53
    expect(r.uptime_30d).toBeNull(); // :54
    expect(Number.isInteger(r.uptime_observations)).toBe(true); // :55
    expect(r.latency_p50_ms).toBeNull(); // :56
    expect(r.last_scan_at).toBeNull(); // :57
    expect(r.documentation_url).toBeNull(); // :58
    expect(Number.isInteger(r.created_at)).toBe(true); // :59 Unix seconds
    expect(Math.abs(r.created_at - Date.now() / 1000)).toBeLessThan(60);
    expect(r.analytics).toEqual({ transactions: 0 }); // :60
    for (const f of NULLABLE_OBJECTS) expect(r[f], f).toBeNull(); // :61
    expect(r.recent_scans).toEqual([]); // :62
    expect(Array.isArray(r.accepted_assets)).toBe(true); // :50
    // :66-76 pricing object; :20-22 fee rule; :31 USDC lane network.
    expect(r.pricing).toMatchObject({
      model: 'per_call', asset: 'USDC', network: 'eip155:8453',
      seller_price: '0.010000', seller_price_atomic: '10000',
      marketplace_fee: '0.000050', total_price: '0.010050', total_price_atomic: '10050', fee_bps: 50,
    });
    expect(r.accepted_assets[0]).toMatchObject({ asset: 'USDC', scheme: 'exact-split', pay_to: s.evm.address });
  });

  it('marketplace.md:30 an ANM listing signed with ML-DSA-65 is priced on native:1; the fee floor is one atomic unit (:20)', async () => {
    const s = seller();
    const res = await h.req('POST', '/api/v1/resources', { body: await signedListing(s, { asset: 'ANM', price: '0.000000001' }) });
    expect(res.status).toBe(201);
    expect(res.json.pricing).toMatchObject({ asset: 'ANM', network: 'native:1', seller_price_atomic: '1', total_price_atomic: '2', marketplace_fee: '0.000000001' });
    expect(res.json.accepted_assets[0]).toMatchObject({ scheme: 'exact-anm-split', pay_to: s.anmAddress });
  });

  it('both assets: both signatures required; the record accepts both', async () => {
    const s = seller();
    const fields = listingFields(s, { also: { asset: 'ANM', price: '2' } });
    const res = await h.req('POST', '/api/v1/resources', { body: await signListing(s, fields) });
    expect(res.status).toBe(201);
    expect(res.json.accepted_assets.map((a: { asset: string }) => a.asset)).toEqual(['USDC', 'ANM']);
    const signed = await signListing(s, fields);
    delete (signed.signatures as Record<string, unknown>).ANM;
    expect((await h.req('POST', '/api/v1/resources', { body: signed })).json.error.code).toBe('invalid_listing_signature');
  });

  it('re-registering with the same key updates the listing; another key is refused and changes nothing', async () => {
    const s = seller();
    const fields = listingFields(s);
    const first = await h.req('POST', '/api/v1/resources', { body: await signListing(s, fields) });
    const again = await h.req('POST', '/api/v1/resources', { body: await signListing(s, { ...fields, name: 'Renamed' }) });
    expect(again.status).toBe(200);
    expect(again.json).toMatchObject({ resource_id: first.json.resource_id, provider_id: first.json.provider_id, name: 'Renamed' });
    const other = seller();
    const hijack = await h.req('POST', '/api/v1/resources', { body: await signListing(other, { ...listingFields(other), endpoint: fields.endpoint, name: 'Hijack' }) });
    expect(hijack.status).toBe(403);
    expect((await h.req('GET', `/api/v1/resources/${first.json.resource_id}`)).json.name).toBe('Renamed');
  });

  it.each([
    ['a signature by another key', async () => { const s = seller(); const f = listingFields(s); const o = seller(); return { ...f, signatures: { USDC: await o.evm.signMessage({ message: 'x' }) } }; }, 400, 'invalid_listing_signature'],
    ['a field changed after signing', async () => { const s = seller(); const b = await signedListing(s); return { ...b, name: 'Tampered' }; }, 400, 'invalid_listing_signature'],
    ['an ANM key that does not control pay_to', async () => { const s = seller(); const o = seller(); const b = await signListing(s, listingFields(s, { asset: 'ANM' })); return { ...b, pay_to: { ANM: o.anmAddress } }; }, 400, 'invalid_listing_signature'],
    ['no signatures', async () => ({ ...listingFields(seller()), signatures: {} }), 400, 'invalid_listing_signature'],
    // The same key and signature bytes in a spelling other than the canonical one (runtime/strict-base64.ts): Node's
    // decoder would read them as the signed bytes, so only strictness tells them apart.
    ['an ANM public_key with stray bits in its last base64 character', async () => anmRespelled((b64) => b64.replace(/(.)=$/, (_m, c: string) => `${nextB64Char(c)}=`), 'public_key'), 400, 'invalid_listing_signature'],
    ['an ANM signature with a character base64 decoders skip', async () => anmRespelled((b64) => `${b64.slice(0, 10)}\n${b64.slice(10)}`, 'signature'), 400, 'invalid_listing_signature'],
    ['an ANM public_key without its padding', async () => anmRespelled((b64) => b64.replace(/=+$/, ''), 'public_key'), 400, 'invalid_listing_signature'],
    ['a price with 7 places in USDC (:71, "6 decimal places")', async () => signedListing(seller(), { price: '0.0000001' }), 400, 'invalid_body'],
    ['a zero price', async () => signedListing(seller(), { price: '0' }), 400, 'invalid_body'],
    ['a non-URL endpoint', async () => signedListing(seller(), { endpoint: 'not a url' }), 400, 'invalid_body'],
    ['an endpoint with a user name and password (never sent by execution or the scanner)', async () => signedListing(seller(), { endpoint: 'https://user:pw@api.example/x' }), 400, 'invalid_body'],
    ['an array body', async () => [1, 2], 400, 'invalid_body'],
    ['a name of spaces only (its fragment\'s tool would be a bare "call")', async () => signedListing(seller(), { name: '   ' }), 400, 'invalid_body'],
    ['a name of tabs, newlines and no-break spaces only', async () => signedListing(seller(), { name: '\t\n\u00a0' }), 400, 'invalid_body'],
    // Signed, so only the text's content is wrong: PostgreSQL cannot store NUL or a lone surrogate in a record.
    ['a NUL in the name', async () => signedListing(seller(), { name: 'Echo\u0000service' }), 400, 'invalid_body'],
    ['a NUL in a tag', async () => signedListing(seller(), { tags: ['nlp\u0000'] }), 400, 'invalid_body'],
    ['a lone surrogate in the description', async () => signedListing(seller(), { description: 'half \uD800 a pair' }), 400, 'invalid_body'],
    ['a NUL in a request_schema key', async () => signedListing(seller(), { request_schema: { 'a\u0000': { type: 'string' } } }), 400, 'invalid_body'],
    // docs/errors.md invalid_body: "a field outside its schema", signed or not.
    ['an unknown field, signed', async () => { const s = seller(); return signListing(s, { ...listingFields(s), foo: 1 }); }, 400, 'invalid_body'],
    ['an unknown field in pricing, signed', async () => { const s = seller(); const f = listingFields(s); return signListing(s, { ...f, pricing: { ...(f.pricing as object), currency: 'USD' } }); }, 400, 'invalid_body'],
    ['a pay_to for an asset the marketplace has no lane for, signed', async () => { const s = seller(); const f = listingFields(s); return signListing(s, { ...f, pay_to: { ...(f.pay_to as object), BTC: 'bc1q' } }); }, 400, 'invalid_body'],
    ['an unknown field in signatures', async () => { const b = await signedListing(seller()); return { ...b, signatures: { ...(b.signatures as object), note: 'x' } }; }, 400, 'invalid_body'],
  ])('%s', async (_name, make, status, code) => {
    const res = await h.req('POST', '/api/v1/resources', { body: await make() });
    expect(res.status).toBe(status);
    expect(res.json.error).toMatchObject({ type: 'invalid_request', code });
    expect(res.json.error.request_id).toMatch(/^req_/);
  });

  it('malformed JSON → 400 invalid_json; over 256 KiB → 413; never a 500', async () => {
    expect((await h.req('POST', '/api/v1/resources', { body: '{"name":' })).json.error.code).toBe('invalid_json');
    const big = await h.req('POST', '/api/v1/resources', { body: JSON.stringify({ name: 'x'.repeat(300 * 1024) }) });
    expect(big.status).toBe(413);
    expect(big.json.error.code).toBe('payload_too_large');
  });
});

describe('GET /api/v1/resources (marketplace.md:90 "all listings", cursor pages)', () => {
  it('pages with a cursor until every listing has been seen once', async () => {
    const s = seller();
    const ids = new Set<string>();
    for (let i = 0; i < 3; i++) ids.add((await h.req('POST', '/api/v1/resources', { body: await signedListing(s) })).json.resource_id);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { json: { data: { resource_id: string }[]; next_cursor: string | null; has_more: boolean } } = await h.req('GET', `/api/v1/resources?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      expect(page.json.data.length).toBeLessThanOrEqual(2);
      seen.push(...page.json.data.map((r) => r.resource_id));
      cursor = page.json.next_cursor;
    } while (cursor);
    expect(new Set(seen).size).toBe(seen.length);
    for (const id of ids) expect(seen).toContain(id);
  });

  it('one listing by id, its fragment; an unknown id is 404 not_found; a bad limit is 400', async () => {
    const created = await h.req('POST', '/api/v1/resources', { body: await signedListing(seller(), { name: 'Translate text', request_schema: { type: 'object', properties: { text: { type: 'string' } } } }) });
    const id = created.json.resource_id as string;
    expect((await h.req('GET', `/api/v1/resources/${id}`)).json).toEqual(created.json);
    const frag = await h.req('GET', `/api/v1/resources/${id}/fragment`);
    expect(frag.json.tool).toEqual({ name: 'translate_text', description: 'Hourly forecast for a city', input_schema: { type: 'object', properties: { text: { type: 'string' } } } });
    expect(frag.json.pricing).toEqual(created.json.pricing);
    expect(frag.json.how_to_pay.quote.url).toBe(`${h.url}/api/v1/route/quote`);
    expect((await h.req('GET', '/api/v1/resources/res_00')).json.error.code).toBe('not_found');
    expect((await h.req('GET', '/api/v1/resources/nope/fragment')).status).toBe(404);
    expect((await h.req('GET', '/api/v1/resources?limit=0')).json.error.code).toBe('bad_request');
    expect((await h.req('DELETE', '/api/v1/resources')).status).toBe(405);
  });
});
