/* eslint-disable @typescript-eslint/no-unsafe-member-access -- assertions read parsed JSON response bodies. */
/** DESIGN §5 "Errors": per-IP rate limits on quote, purchase and execute (60/min; 2/min here), 429 in the envelope. */
import { describe, expect, it } from 'vitest';
import { useMarket } from './harness.ts';

const h = useMarket({ perIpPerMinute: 2 });

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
});
