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
import { bodyBytes, contentType, expectBoundary, objectText, scalarText, segment } from '../helpers/boundary.ts';
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

const FIELDS = ['amount', 'amount_nanm', 'currency', 'merchant_order_id', 'description', 'metadata', 'success_url', 'payment_intent', 'reason', 'name', 'email', 'mode', 'kind', 'origins', 'address', 'signed_transaction'];
const LITERALS = ['"1.5"', '"ANM"', '"live"', '"secret"', '"pay_aaaaaaaaaaaaaaaaaaaaaaaa"', '["https://a.example"]'];
const bodies = bodyBytes(objectText(FIELDS, scalarText(LITERALS)));
const ids = segment(fc.oneof(fc.stringMatching(/^pay_[a-z2-7]{24}$/), fc.stringMatching(/^re_[a-z2-7]{1,30}$/)));

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
        ids,
        bodies,
        contentType,
        fc.boolean(),
        async (route, auth, id, body, type, withIdem) => {
          const headers: Record<string, string> = { ...creds[auth] };
          if (type !== undefined) headers['content-type'] = type;
          if (withIdem) headers['idempotency-key'] = idem();
          const before = await rows();
          const r = await request(h().url, route.method, route.path(id), { headers, ...(route.body && body.length > 0 ? { body } : {}) });
          const what = `${route.method} ${route.path(id).slice(0, 120)} [${auth}] ${type} ${body.subarray(0, 80).toString('latin1')}: ${r.status} ${r.text.slice(0, 200)}`;
          expectBoundary(r, what);
          if (r.status >= 400) expect(await rows(), what).toBe(before);
        },
      ),
      { numRuns: RUNS },
    );
  }, 60_000);
});
