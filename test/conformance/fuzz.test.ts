/**
 * fast-check over request bodies, headers, query strings and path ids: never a 5xx, every
 * error is the spec envelope, every success is a valid resource, and a refused request
 * persists nothing (no actor, no idempotency record).
 */
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { ErrorEnvelope } from '../../gateway/schemas/common.ts';
import { PaymentIntent, PaymentIntentList } from '../../gateway/schemas/payment-intent.ts';
import { HIGH_LIMITS, idem, useHarness, type Res } from './harness.ts';

const RUNS = Number(process.env.FUZZ_RUNS ?? 120);
const FIELDS = ['amount', 'amount_nanm', 'currency', 'merchant_order_id', 'description', 'metadata', 'success_url', 'cancel_url', 'protocol_fee', 'colour'];

/** Header values Node will send: visible ASCII and latin-1, tabs and spaces. */
const headerValue = fc.string({ unit: fc.constantFrom(...'abcXYZ019 _-:;=,./\t"\'%*ask_test_apk_live_Bearer'.split('')), maxLength: 300 });

const amountish = fc.oneof(
  fc.constantFrom('1', '0', '-1', '1.5', '0.000000001', '1.0000000001', '9223372036854775807', '9223372036854775808', '1e3', ' 1', '١'),
  fc.stringMatching(/^[0-9]{0,25}(\.[0-9]{0,12})?$/),
  fc.double(),
  fc.integer(),
  fc.boolean(),
  fc.constant(null),
);
const fieldValue = fc.oneof(amountish, fc.string({ maxLength: 200 }), fc.jsonValue({ maxDepth: 3 }), fc.webUrl(), fc.constantFrom('USD', 'ANM', 'anm', 'EUR'));
const createBody = fc.oneof(
  { weight: 3, arbitrary: fc.dictionary(fc.constantFrom(...FIELDS), fieldValue, { maxKeys: 6 }) },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 4 }) },
);

function expectShape(r: Res, successSchema: { safeParse(v: unknown): { success: boolean } }): void {
  expect(r.status, r.text).toBeLessThan(500);
  if (r.status >= 400) expect(ErrorEnvelope.safeParse(r.json).success, r.text).toBe(true);
  else expect(successSchema.safeParse(r.json).success, r.text).toBe(true);
}

describe('conformance: fuzzing', () => {
  const h = useHarness(HIGH_LIMITS);
  let key: string;
  const persisted = async () => `${await h().count('actors')}/${await h().count('idempotency_keys')}`;
  beforeAll(async () => {
    key = (await h().merchant()).keys.test.secret;
  });

  it('request bodies: never a 500, always the envelope, nothing persisted on a refused request', async () => {
    await fc.assert(
      fc.asyncProperty(createBody, fc.boolean(), async (body, raw) => {
        const before = await persisted();
        const sent = raw && typeof body === 'string' ? body : JSON.stringify(body);
        const r = await h().req('POST', '/api/v1/payment-intents', { key, idem: idem(), body: sent });
        expectShape(r, PaymentIntent);
        if (r.status >= 400) expect(await persisted()).toBe(before);
      }),
      { numRuns: RUNS },
    );
  });

  it('raw body bytes (broken JSON, binary): never a 500', async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(fc.string({ maxLength: 100 }), fc.uint8Array({ maxLength: 100 }).map((a) => Buffer.from(a))), async (raw) => {
        const before = await persisted();
        const r = await h().req('POST', '/api/v1/payment-intents', { key, idem: idem(), body: raw, headers: { 'content-type': 'application/json' } });
        expectShape(r, PaymentIntent);
        if (r.status >= 400) expect(await persisted()).toBe(before);
      }),
      { numRuns: RUNS },
    );
  });

  it('headers (Authorization, Idempotency-Key, Cookie, Content-Type): never a 500, refusals persist nothing', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          authorization: fc.oneof(headerValue, fc.constant(`Bearer ${key}`), headerValue.map((v) => `Bearer ${v}`)),
          'idempotency-key': fc.oneof(headerValue, fc.string({ maxLength: 300 }).map((s) => s.replace(/[^\x20-\x7e]/g, 'x'))),
          cookie: headerValue,
          'content-type': fc.oneof(fc.constant('application/json'), headerValue),
        }, { requiredKeys: [] }),
        async (headers) => {
          const before = await persisted();
          const r = await h().req('POST', '/api/v1/payment-intents', { headers, body: JSON.stringify({ amount: '1' }) });
          expectShape(r, PaymentIntent);
          if (r.status >= 400) expect(await persisted()).toBe(before);
        },
      ),
      { numRuns: RUNS },
    );
  });

  it('list query strings: 200 list or 400 envelope, never a 500', async () => {
    const param = fc.tuple(fc.constantFrom('limit', 'status', 'starting_after', 'merchant_order_id', 'x', ''), fc.oneof(fc.string({ maxLength: 30 }), fc.integer().map(String), fc.constantFrom('PAID', 'EXPIRED', '20', '0', '%', '&')));
    await fc.assert(
      fc.asyncProperty(fc.array(param, { maxLength: 4 }), fc.boolean(), async (params, encode) => {
        const q = params.map(([k, v]) => `${k}=${encode ? encodeURIComponent(v) : encodeURI(v)}`).join('&');
        const r = await h().req('GET', `/api/v1/payment-intents?${q}`, { key });
        expectShape(r, PaymentIntentList);
      }),
      { numRuns: RUNS },
    );
  });

  it('path ids: 404 (or 400) envelope for anything that is not one of our intents, never a 500', async () => {
    await fc.assert(
      // "." and ".." are dot-segments: the client removes them from the path before sending
      // (RFC 3986 §5.2.4), so the request would name another route, not this id.
      fc.asyncProperty(fc.oneof(fc.string({ minLength: 1, maxLength: 80 }).filter((s) => s !== '.' && s !== '..'), fc.stringMatching(/^pay_[a-z2-7]{24}$/)), async (id) => {
        const seg = encodeURIComponent(id);
        for (const [method, path] of [
          ['GET', `/api/v1/payment-intents/${seg}`],
          ['POST', `/api/v1/payment-intents/${seg}/cancel`],
          ['GET', `/c/${seg}/payment.json`],
        ] as const) {
          const r = await h().req(method, path, { key });
          expect(r.status, `${method} ${path}: ${r.text}`).toBeGreaterThanOrEqual(400);
          expectShape(r, PaymentIntent);
        }
      }),
      { numRuns: Math.ceil(RUNS / 2) },
    );
  });
});
