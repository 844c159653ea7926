/**
 * Property suite at the marketplace's HTTP boundary (issue 26, last item; spec "Errors",
 * marketplace.md "Endpoints" :93-94): the real app over real HTTP, every route that takes a
 * body or an id, fed random JSON, deep nesting, invalid UTF-8, odd media types, duplicate keys,
 * huge and tiny numbers, astral characters, percent-encoding garbage in paths, and x402 legs as
 * base64 that is malformed, not canonical, not an object inside, or names a key twice inside.
 * Invariants: never a 5xx; every refusal is the spec envelope with a request_id; a refused
 * request stores nothing (rows of the market's tables counted before and after).
 */
import fc from 'fast-check';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { beforeAll, describe, expect, it } from 'vitest';
import { seller, signedListing, signLeg, toBase64 } from '../fixtures/market.ts';
import { bodyBytes, contentType, expectBoundary, objectText, scalarText, segment } from '../helpers/boundary.ts';
import { FEE_ADDRESSES, useMarket } from './harness.ts';

const RUNS = Number(process.env.BOUNDARY_RUNS ?? 400);
/**
 * Every table a request can write. One exception is documented (ADR 0077 "Shared cooldown";
 * docs/marketplace.md "POST /api/v1/resources"): a takeover attempt that gets as far as probing
 * the endpoint records the probe's time in `listing_takeover_probes` even when refused with 403,
 * since that time is what the cooldown counts from. The random bodies below never carry a
 * valid signature, so no refusal of theirs reaches that probe.
 */
const TABLES = ['actors', 'actor_events', 'outbox', 'timers', 'idempotency_keys', 'market_leg_nonces', 'usdc_authorizations', 'usdc_balances', 'listing_takeover_probes'];

const h = useMarket();
const buyer = privateKeyToAccount(generatePrivateKey());
/** Filled in beforeAll: a real intent, a real listing and two signed legs (as JSON objects). */
const real = { intent: '', execIntent: '', resource: '', payTo: '', seller: {} as Record<string, unknown>, fee: {} as Record<string, unknown> };
const counts = async () => Object.fromEntries(await Promise.all(TABLES.map(async (t) => [t, (await h.backend.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${t}`)).rows[0]!.n] as const)));
const rows = async () => Object.values(await counts()).join('/');

beforeAll(async () => {
  const s = seller();
  // On loopback, which routed execution refuses (no development switch here) before recording
  // anything: an execution the generators get right ends there, with no DNS look-up or wait.
  const listing = await h.req('POST', '/api/v1/resources', { body: await signedListing(s, { name: 'Boundary sentiment', tags: ['nlp'], price: '0.02', endpoint: 'http://127.0.0.1:9/boundary' }) });
  expect(listing.status).toBe(201);
  real.resource = (listing.json as { resource_id: string }).resource_id;
  await h.market.ledger.fund(buyer.address, 1_000_000n);
  real.payTo = s.evm.address;
  await freshIntent();
});

/** A new quote and two new legs for it (the property run may settle the old ones). */
async function freshIntent(): Promise<void> {
  const q = await h.req('POST', '/api/v1/route/quote', { body: { capability: 'sentiment', asset: 'USDC' } });
  expect(q.status).toBe(201);
  real.intent = (q.json as { intent_id: string }).intent_id;
  // Executions get their own, which no purchase in the run can use up.
  real.execIntent = ((await h.req('POST', '/api/v1/route/quote', { body: { capability: 'sentiment', asset: 'USDC' } })).json as { intent_id: string }).intent_id;
  real.seller = await signLeg(buyer, { to: real.payTo, value: 20_000n });
  real.fee = await signLeg(buyer, { to: FEE_ADDRESSES.USDC, value: 100n });
}

/** A key named twice inside the leg: the same value again, so only a strict reader notices. */
const withDuplicate = (leg: Record<string, unknown>) => `{"x402Version":${JSON.stringify(leg.x402Version)},${JSON.stringify(leg).slice(1)}`;
const b64 = (b: Buffer, url = false) => b.toString(url ? 'base64url' : 'base64');

/** A leg as JSON text: the real one, its header value, and every way the header value can be wrong. */
const legVariants = (which: 'seller' | 'fee') => {
  const l = () => real[which];
  return fc.oneof(
    fc.constant(null).map(() => JSON.stringify(l())),
    fc.constant(null).map(() => JSON.stringify(toBase64(l()))),
    fc.constant(null).map(() => JSON.stringify(b64(Buffer.from(JSON.stringify(l())), true))),
    fc.constant(null).map(() => JSON.stringify(b64(Buffer.from(withDuplicate(l()))))),
    // Not canonical: a character Node's decoder would skip, or padding removed or added.
    fc.tuple(fc.nat(), fc.constantFrom('*', ' ', '\n', '.', '=', '-', '%')).map(([i, c]) => {
      const t = toBase64(l());
      const at = i % t.length;
      return JSON.stringify(t.slice(0, at) + c + t.slice(at));
    }),
    fc.constant(null).map(() => JSON.stringify(toBase64(l()).replace(/=+$/, '') + '===')),
  );
};
const badLeg = fc.oneof(
  legVariants('seller'),
  legVariants('fee'),
  fc.jsonValue({ maxDepth: 2 }).filter((v) => typeof v !== 'object' || v === null || Array.isArray(v)).map((v) => JSON.stringify(b64(Buffer.from(JSON.stringify(v))))),
  fc.uint8Array({ minLength: 1, maxLength: 64 }).map((a) => JSON.stringify(b64(Buffer.from(a)))),
  fc.string({ maxLength: 40 }).map((s) => JSON.stringify(s)),
  scalarText(['{}', '[]', '""']),
);
/** Mostly a variant of the leg that belongs in this place, so the other leg gets read too. */
const leg = (which: 'seller' | 'fee') => fc.oneof({ arbitrary: legVariants(which), weight: 3 }, { arbitrary: badLeg, weight: 1 });
const intentText = fc.oneof(fc.constant(null).map(() => JSON.stringify(real.intent)), fc.stringMatching(/^pi_[0-9a-f]{1,40}$/).map((s) => JSON.stringify(s)), scalarText(['""']));
const purchaseText = fc
  .tuple(intentText, leg('seller'), leg('fee'), fc.nat(4).map((n) => n === 0))
  .map(([intent, seller, fee, dupLegs]) => `{"intent_id":${intent},"payment":{"legs":{"seller":${seller},"fee":${fee}${dupLegs ? `,"fee":${fee}` : ''}}}}`);
/** A routed execution (marketplace.md:95): fee_payment absent, without legs, or with a fee leg; seller_payment a leg's text. */
const valid = (make: () => string, arbitrary: fc.Arbitrary<string>) => fc.oneof({ arbitrary: fc.constant(null).map(make), weight: 1 }, { arbitrary, weight: 1 });
const executeText = fc
  .tuple(
    valid(() => JSON.stringify(real.execIntent), intentText),
    valid(() => JSON.stringify(real.fee), leg('fee')),
    valid(() => JSON.stringify(toBase64(real.seller)), leg('seller')),
    fc.nat(5),
    fc.oneof({ arbitrary: fc.constant('{"say":"hi"}'), weight: 3 }, { arbitrary: scalarText(['{}']), weight: 1 }),
  )
  .map(([intent, fee, sellerPayment, shape, body]) => {
    const feePayment = shape === 0 ? '' : shape === 1 ? ',"fee_payment":{"legs":{}}' : `,"fee_payment":{"legs":{"fee":${fee}}}`;
    return `{"intent_id":${intent}${feePayment},"seller_payment":${sellerPayment},"body":${body}}`;
  });
const facilitatorText = fc
  .tuple(badLeg, fc.constantFrom('{"scheme":"exact","network":"eip155:8453","payTo":"0x000000000000000000000000000000000000fee0","amount":"100"}', '{"scheme":"exact","network":"base","payTo":"0x1","maxAmountRequired":"1e400"}', '[]', '"x"'))
  .map(([payload, req]) => `{"x402Version":2,"paymentPayload":${payload},"paymentRequirements":${req}}`);

const FIELDS = ['capability', 'max_price', 'asset', 'max_latency_ms', 'name', 'description', 'method', 'endpoint', 'pricing', 'pay_to', 'signatures', 'tags', 'intent_id', 'payment', 'paymentPayload'];
const generic = bodyBytes(objectText(FIELDS, scalarText(['"sentiment"', '"USDC"', '"ANM"', '"0.05"', '"1e400"', '"-1"', '{"USDC":"0x1"}', '"GET"', '"https://a.example/x"'])));
const bodies = {
  generic,
  purchase: fc.oneof({ arbitrary: generic, weight: 1 }, { arbitrary: purchaseText.map((t) => Buffer.from(t, 'utf8')), weight: 3 }),
  facilitator: fc.oneof({ arbitrary: generic, weight: 1 }, { arbitrary: facilitatorText.map((t) => Buffer.from(t, 'utf8')), weight: 3 }),
  execute: fc.oneof({ arbitrary: generic, weight: 1 }, { arbitrary: executeText.map((t) => Buffer.from(t, 'utf8')), weight: 3 }),
};
const ids = segment(fc.oneof(fc.stringMatching(/^res_[0-9a-f]{1,64}$/), fc.stringMatching(/^pi_[0-9a-z]{1,40}$/), fc.constant(null).map(() => real.intent), fc.constant(null).map(() => real.resource)));

interface Route {
  method: 'GET' | 'POST';
  path: (id: string) => string;
  body?: keyof typeof bodies;
}
/** Purchase and execute are listed three times: their legs are where most of the decoding happens. */
const ROUTES: Route[] = [
  { method: 'POST', path: () => '/api/v1/resources', body: 'generic' },
  { method: 'GET', path: (id) => `/api/v1/resources/${id}` },
  { method: 'GET', path: (id) => `/api/v1/resources/${id}/fragment` },
  { method: 'GET', path: (id) => `/api/v1/resources?cursor=${id}&limit=${id}` },
  { method: 'GET', path: (id) => `/api/v1/search?q=${id}&cursor=${id}` },
  { method: 'POST', path: () => '/api/v1/route/quote', body: 'generic' },
  { method: 'POST', path: () => '/api/v1/purchase', body: 'purchase' },
  { method: 'POST', path: () => '/api/v1/purchase', body: 'purchase' },
  { method: 'POST', path: () => '/api/v1/purchase', body: 'purchase' },
  { method: 'POST', path: () => '/api/v1/route/execute', body: 'execute' },
  { method: 'POST', path: () => '/api/v1/route/execute', body: 'execute' },
  { method: 'POST', path: () => '/api/v1/route/execute', body: 'execute' },
  { method: 'GET', path: (id) => `/api/v1/purchases/${id}` },
  { method: 'GET', path: (id) => `/.well-known/x402-marketplace?x=${id}` },
  { method: 'GET', path: (id) => `/.well-known/x402?cursor=${id}` },
  { method: 'GET', path: (id) => `/discovery/resources?type=${id}&limit=${id}&offset=${id}` },
  { method: 'GET', path: (id) => `/facilitator/discovery/resources?type=http&limit=${id}&cursor=${id}` },
  { method: 'GET', path: (id) => `/discovery/search?query=${id}&cursor=${id}&limit=${id}` },
  { method: 'POST', path: () => '/facilitator/verify', body: 'facilitator' },
  { method: 'POST', path: () => '/facilitator/settle', body: 'facilitator' },
];

describe('marketplace: HTTP boundary properties (issue 26)', () => {
  it('never a 5xx, always the envelope, and a refusal stores nothing', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...ROUTES).chain((route) => fc.record({ route: fc.constant(route), body: route.body ? bodies[route.body] : fc.constant(Buffer.alloc(0)) })),
        ids,
        // Mostly JSON, so most bodies get past the media type to the legs inside.
        fc.oneof({ arbitrary: fc.constant('application/json'), weight: 3 }, { arbitrary: contentType, weight: 1 }),
        fc.nat(3).map((n) => n > 0),
        async ({ route, body }, id, type, withIdem) => {
          const headers: Record<string, string> = {};
          if (type !== undefined) headers['content-type'] = type;
          if (withIdem) headers['idempotency-key'] = `k_${Math.random()}`;
          const before = await rows();
          const r = await h.req(route.method, route.path(id), { headers, ...(route.body && body.length > 0 ? { body } : {}) });
          const what = `${route.method} ${route.path(id).slice(0, 120)} ${type} ${body.subarray(0, 160).toString('latin1')}: ${r.status} ${r.text.slice(0, 200)}`;
          // The one documented 5xx a request can earn here: an execution that passed every check
          // reaches the loopback seller, which is refused before anything is recorded (docs/errors.md seller_unreachable).
          expectBoundary(r, what, route.body === 'execute' ? 'seller_unreachable' : undefined);
          if (r.status >= 400) expect(await rows(), what).toBe(before);
        },
      ),
      { numRuns: RUNS },
    );
  }, 60_000);
});

describe('x402 legs inside bodies are read strictly (issue 26)', () => {
  beforeAll(freshIntent);
  const purchase = (seller: unknown, fee: unknown = real.fee) =>
    h.req('POST', '/api/v1/purchase', { headers: { 'idempotency-key': `k_${Math.random()}` }, body: { intent_id: real.intent, payment: { legs: { seller, fee } } } });
  const code = (r: { json: unknown }) => (r.json as { error: { code: string; message: string } }).error;

  it.each([
    ['a key named twice inside the decoded leg', () => b64(Buffer.from(withDuplicate(real.seller)))],
    ['a character the decoder would skip', () => toBase64(real.seller).replace(/^(.{8})/, '$1*')],
    ['both alphabets in one value', () => toBase64(real.seller).replace(/^(.{7})./, '$1-').replace(/^(.{3})./, '$1+')],
    ['an array inside', () => toBase64([real.seller])],
    ['invalid UTF-8 inside', () => b64(Buffer.concat([Buffer.from(JSON.stringify(real.seller).slice(0, -1)), Buffer.from(',"x":"\xff"}', 'latin1')]))],
  ])('402 invalid_payment (invalid_payload) and nothing stored: %s', async (_name, make) => {
    const before = await rows();
    const r = await purchase(make());
    expect(r.status, r.text).toBe(402);
    expect(code(r).code).toBe('invalid_payment');
    expect(code(r).message).toContain('invalid_payload');
    expect(await rows()).toBe(before);
  });

  it('a duplicate key inside a facilitator payload is an invalid payload, not a verification', async () => {
    const header = b64(Buffer.from(withDuplicate(real.fee)));
    // The leg's own requirements: with the token's EIP-712 domain in `extra`, as the SDK's facilitator needs them.
    const requirements = real.fee.accepted;
    const dup = await h.req('POST', '/facilitator/verify', { body: { x402Version: 2, paymentPayload: header, paymentRequirements: requirements } });
    expect(dup.json).toMatchObject({ isValid: false, invalidReason: 'invalid_payload' });
    const ok = await h.req('POST', '/facilitator/verify', { body: { x402Version: 2, paymentPayload: toBase64(real.fee), paymentRequirements: requirements } });
    expect(ok.json).toMatchObject({ isValid: true });
  });

  it('the canonical header value, standard or url-safe, still purchases', async () => {
    const r = await purchase(b64(Buffer.from(JSON.stringify(real.seller)), true), toBase64(real.fee));
    expect(r.status, r.text).toBe(200);
    expect((r.json as { status: string }).status).toBe('VERIFIED');
  });

  it('a body naming a key twice is 400 invalid_json before any route reads it', async () => {
    const r = await h.req('POST', '/api/v1/route/quote', { body: '{"capability":"sentiment","asset":"USDC","asset":"ANM"}' });
    expect(r.status).toBe(400);
    expect(code(r).code).toBe('invalid_json');
  });
});

describe('a refused takeover stores only when its endpoint was probed (ADR 0077)', () => {
  it('403 adds that one row and nothing else; the 429 within the cooldown stores nothing', async () => {
    const endpoint = `https://seller.example/${Math.random().toString(16).slice(2, 10)}`;
    const listing = (s: ReturnType<typeof seller>) => signedListing(s, { name: 'Boundary takeover', endpoint, price: '0.02' });
    expect((await h.req('POST', '/api/v1/resources', { body: await listing(seller()) })).status).toBe(201);
    const before = await counts();
    // Another key, and the endpoint's 402 (there is none) cannot name its payTo.
    const refused = await h.req('POST', '/api/v1/resources', { body: await listing(seller()) });
    expect(refused.status, refused.text).toBe(403);
    expect(await counts()).toEqual({ ...before, listing_takeover_probes: before.listing_takeover_probes! + 1 });
    const cooling = await h.req('POST', '/api/v1/resources', { body: await listing(seller()) });
    expect(cooling.status, cooling.text).toBe(429);
    expect(await counts()).toEqual({ ...before, listing_takeover_probes: before.listing_takeover_probes! + 1 });
  }, 30_000);
});

