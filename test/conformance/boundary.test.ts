/**
 * Property suite at the HTTP boundary (issue 26, spec "Errors"): the real app over real HTTP,
 * every route that takes a body or an id, with and without credentials, fed random JSON, deep
 * nesting, invalid UTF-8, odd media types, duplicate keys, huge and tiny numbers, astral
 * characters and percent-encoding garbage in paths. Invariants: never a 5xx; every refusal is
 * the spec envelope with a request_id (also in the request-id header); a refused request stores
 * nothing (rows counted before and after).
 */
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { ErrorEnvelope } from '../../gateway/schemas/common.ts';
import { HIGH_LIMITS, idem, request, useHarness } from './harness.ts';

const RUNS = Number(process.env.BOUNDARY_RUNS ?? 400);
const TABLES = ['actors', 'idempotency_keys', 'merchants', 'api_keys', 'payout_addresses'];

type Auth = 'none' | 'test' | 'live' | 'operator' | 'garbage';
interface Route {
  method: 'GET' | 'POST';
  path: (id: string) => string;
  body: boolean;
}
const ROUTES: Route[] = [
  { method: 'POST', path: () => '/api/v1/payment-intents', body: true },
  { method: 'GET', path: (id) => `/api/v1/payment-intents/${id}`, body: false },
  { method: 'POST', path: (id) => `/api/v1/payment-intents/${id}/cancel`, body: true },
  { method: 'POST', path: () => '/api/v1/refunds', body: true },
  { method: 'GET', path: (id) => `/api/v1/refunds/${id}`, body: false },
  { method: 'POST', path: (id) => `/api/v1/refunds/${id}/submit`, body: true },
  { method: 'GET', path: (id) => `/c/${id}/payment.json`, body: false },
  { method: 'POST', path: () => '/ops/api/merchants', body: true },
  { method: 'POST', path: (id) => `/ops/api/merchants/${id}/keys`, body: true },
  { method: 'POST', path: (id) => `/ops/api/merchants/${id}/allowed-origins`, body: true },
  { method: 'POST', path: (id) => `/ops/api/merchants/${id}/payout`, body: true },
  { method: 'POST', path: (id) => `/ops/api/keys/${id}/revoke`, body: true },
  { method: 'POST', path: (id) => `/ops/api/merchants/${id}/suspend`, body: false },
];

const astral = fc.string({ unit: fc.constantFrom('😀', '𝄞', '𠜎', 'a', 'é', '\u0000', '\uD800', '"', '\\'), maxLength: 40 });
const number = fc.oneof(fc.double(), fc.constantFrom('1e400', '-1e400', '1e-400', '123456789012345678901234567890', '-0', '0.0000000000000000001'));
const fields = fc.constantFrom('amount', 'amount_nanm', 'currency', 'merchant_order_id', 'description', 'metadata', 'success_url', 'payment_intent', 'reason', 'name', 'email', 'mode', 'kind', 'origins', 'address', 'signed_transaction');
const scalarText = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)),
  astral.map((s) => JSON.stringify(s)),
  number.map((n) => (typeof n === 'number' ? JSON.stringify(n) : n)),
  fc.constantFrom('"1.5"', '"ANM"', '"live"', '"secret"', '"pay_aaaaaaaaaaaaaaaaaaaaaaaa"', '["https://a.example"]'),
);
/** Objects of plausible fields as text, so duplicates and raw numbers survive to the wire. */
const objectText = fc
  .tuple(fc.array(fc.tuple(fields, scalarText), { maxLength: 6 }), fc.boolean())
  .map(([kv, dup]) => {
    const pairs = kv.map(([k, v]) => `${JSON.stringify(k)}:${v}`);
    if (dup && kv[0]) pairs.push(`${JSON.stringify(kv[0][0])}:${kv[0][1]}`);
    return `{${pairs.join(',')}}`;
  });
const deep = fc.tuple(fc.integer({ min: 20, max: 20_000 }), fc.constantFrom('{"metadata":', '{"a":', '[')).map(([n, open]) => {
  const close = open === '[' ? ']' : '}';
  return `${open.repeat(n)}1${close.repeat(n)}`;
});
const bodyBytes = fc.oneof(
  objectText.map((t) => Buffer.from(t, 'utf8')),
  fc.jsonValue({ maxDepth: 4 }).map((v) => Buffer.from(JSON.stringify(v) ?? 'null', 'utf8')),
  deep.map((t) => Buffer.from(t, 'utf8')),
  fc.uint8Array({ maxLength: 200 }).map((a) => Buffer.from(a)),
  objectText.map((t) => Buffer.concat([Buffer.from(t.slice(0, -1), 'utf8'), Buffer.from(',"x":"\xff\xfe"}', 'latin1')])),
  fc.constant(Buffer.alloc(0)),
);
const contentType = fc.constantFrom(undefined, 'application/json', 'application/json; charset=utf-8', 'application/json; charset=latin1', 'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/json;charset=utf-16', '');
/** Path segments as sent: valid-looking ids, random text encoded, and raw percent garbage. */
const segment = fc.oneof(
  fc.stringMatching(/^pay_[a-z2-7]{24}$/),
  fc.stringMatching(/^re_[a-z2-7]{1,30}$/),
  fc.string({ minLength: 1, maxLength: 60 }).filter((s) => s !== '.' && s !== '..').map(encodeURIComponent),
  fc.array(fc.constantFrom('%', '%f', '%ff', '%E0%A4%A', '%C0%80', '%00', '%2F', '%25', 'a', '😀', '%F0%9F%98'), { minLength: 1, maxLength: 8 }).map((xs) => xs.join('')).map((s) => s.replace(/😀/g, encodeURIComponent('😀'))),
  fc.integer({ min: 200, max: 3000 }).map((n) => 'x'.repeat(n)),
);

describe('conformance: HTTP boundary properties (issue 26)', () => {
  const h = useHarness(HIGH_LIMITS);
  const creds: Record<Auth, Record<string, string>> = { none: {}, test: {}, live: {}, operator: {}, garbage: { authorization: 'Bearer ask_test_' + 'A'.repeat(32) } };
  const rows = async () => (await Promise.all(TABLES.map((t) => h().count(t)))).join('/');

  beforeAll(async () => {
    const m = await h().merchant();
    creds.test = { authorization: `Bearer ${m.keys.test.secret}` };
    creds.live = { authorization: `Bearer ${m.keys.live.secret}` };
    creds.operator = { authorization: `Bearer ${h().deps.operatorToken}` };
  });

  it('never a 5xx, always the envelope, and a refusal stores nothing', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...ROUTES),
        fc.constantFrom<Auth>('none', 'test', 'live', 'operator', 'garbage'),
        segment,
        bodyBytes,
        contentType,
        fc.boolean(),
        async (route, auth, id, body, type, withIdem) => {
          const headers: Record<string, string> = { ...creds[auth] };
          if (type !== undefined) headers['content-type'] = type;
          if (withIdem) headers['idempotency-key'] = idem();
          const before = await rows();
          const r = await request(h().url, route.method, route.path(id), { headers, ...(route.body && body.length > 0 ? { body } : {}) });
          const what = `${route.method} ${route.path(id).slice(0, 120)} [${auth}] ${type} ${body.subarray(0, 80).toString('latin1')}: ${r.status} ${r.text.slice(0, 200)}`;
          expect(r.status, what).toBeLessThan(500);
          if (r.status >= 400) {
            expect(ErrorEnvelope.safeParse(r.json).success, what).toBe(true);
            const requestId = (r.json as { error: { request_id: string } }).error.request_id;
            expect(requestId, what).toMatch(/^req_/);
            expect(r.headers['request-id'], what).toBe(requestId);
            expect(await rows(), what).toBe(before);
          }
        },
      ),
      { numRuns: RUNS },
    );
  }, 60_000);
});
