/* eslint-disable @typescript-eslint/no-unsafe-member-access -- assertions read parsed JSON response bodies. */
/**
 * DESIGN §5 "Errors": per-IP rate limits on quote, purchase and execute (60/min; 2/min here),
 * 429 in the envelope, "as for the merchant API", whose first refusal is the per-IP limit
 * (docs/errors.md "Requests are judged in this order").
 */
import { describe, expect, it } from 'vitest';
import { useMarket } from './harness.ts';

const h = useMarket({ perIpPerMinute: 2, faucet: true });

const PAID = ['/api/v1/route/quote', '/api/v1/purchase', '/api/v1/route/execute', '/api/v1/usdc/faucet'];

describe('marketplace limits (DESIGN §5 Errors)', () => {
  it('a third quote within the minute is 429 rate_limited with Retry-After; discovery is not limited', async () => {
    const body = { capability: 'nothing-listed', asset: 'USDC' };
    expect((await h.req('POST', '/api/v1/route/quote', { body })).status).toBe(404);
    expect((await h.req('POST', '/api/v1/route/quote', { body })).status).toBe(404);
    const third = await h.req('POST', '/api/v1/route/quote', { body });
    expect(third.status).toBe(429);
    expect(third.json.error.code).toBe('rate_limited');
    expect(Number(third.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    for (let i = 0; i < 5; i++) expect((await h.req('GET', '/api/v1/search?capability=x')).status).toBe(200);
  });

  it('a third execute within the minute is 429 rate_limited, before the body is read', async () => {
    const body = { intent_id: 'pi_0', fee_payment: { legs: {} }, seller_payment: 'x' };
    expect((await h.req('POST', '/api/v1/route/execute', { body })).status).toBe(404);
    expect((await h.req('POST', '/api/v1/route/execute', { body })).status).toBe(404);
    const third = await h.req('POST', '/api/v1/route/execute', { body });
    expect(third.status).toBe(429);
    expect(third.json.error.code).toBe('rate_limited');
  });

  // Each case from its own source address: the buckets are per IP.
  it.each(PAID.map((url, i) => [url, `127.0.3.${i + 1}`]))('docs/errors.md "the first refusal wins: the per-IP rate limit": %s over the limit with bad JSON is 429, not 400 invalid_json', async (url, from) => {
    const bad = { from, headers: { 'idempotency-key': 'k' }, body: '{"intent_id":' };
    for (let i = 0; i < 2; i++) expect((await h.req('POST', url, bad)).json.error.code).toBe('invalid_json');
    const third = await h.req('POST', url, bad);
    expect([third.status, third.json.error.code]).toEqual([429, 'rate_limited']);
    expect(third.headers['x-ratelimit-limit']).toBe('2');
    expect(third.headers['x-ratelimit-remaining']).toBe('0');
    expect(Number(third.headers['retry-after'])).toBeGreaterThanOrEqual(1);
  });

  it.each(PAID.map((url, i) => [url, `127.0.4.${i + 1}`]))('DESIGN §5 "bodies capped at 256 KiB, as for the merchant API": %s over the limit with a body over the cap is 429, not 413', async (url, from) => {
    const big = { from, headers: { 'idempotency-key': 'k' }, body: Buffer.alloc(256 * 1024 + 1, 0x20) };
    for (let i = 0; i < 2; i++) expect((await h.req('POST', url, big)).json.error.code).toBe('payload_too_large');
    const third = await h.req('POST', url, big);
    expect([third.status, third.json.error.code]).toEqual([429, 'rate_limited']);
    expect(third.headers['x-ratelimit-remaining']).toBe('0');
    expect(Number(third.headers['retry-after'])).toBeGreaterThanOrEqual(1);
  });
});
