/* eslint-disable @typescript-eslint/no-unsafe-member-access -- assertions read parsed JSON response bodies. */
/**
 * The marketplace's rate-limit headers are the merchant API's: DESIGN §5 "Errors" limits quote,
 * purchase and execute per IP "as for the merchant API", whose spec ("Limits", rate-limit headers)
 * sends `X-RateLimit-Limit`, `X-RateLimit-Remaining` (floored), `X-RateLimit-Reset` (seconds until
 * the bucket is full) and `Retry-After` (seconds) only on refused requests.
 */
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { errorOptions } from '../../gateway/http/error-reply.ts';
import { installEdge } from '../../gateway/http/edge.ts';
import { ipRateLimit } from '../../gateway/market/rate-limit.ts';
import { useMarket } from './harness.ts';

const h = useMarket({ perIpPerMinute: 2, faucet: true });

describe('marketplace rate-limit headers (merchant spec "Limits")', () => {
  it.each([
    ['/api/v1/route/quote', { capability: 'nothing-listed', asset: 'USDC' }],
    ['/api/v1/purchase', {}],
    ['/api/v1/route/execute', { intent_id: 'pi_0', fee_payment: { legs: {} }, seller_payment: 'x' }],
    ['/api/v1/usdc/faucet', {}],
  ])('%s sends Limit, Remaining and Reset on every answer, Retry-After only on the 429', async (url, body) => {
    const first = await h.req('POST', url, { body });
    expect(first.status).not.toBe(429);
    expect(first.headers['x-ratelimit-limit']).toBe('2');
    expect(first.headers['x-ratelimit-remaining']).toBe('1');
    // One token spent at 2 a minute: 30 s until the bucket is full again.
    expect(Number(first.headers['x-ratelimit-reset'])).toBeGreaterThanOrEqual(29);
    expect(Number(first.headers['x-ratelimit-reset'])).toBeLessThanOrEqual(30);
    expect(first.headers['retry-after']).toBeUndefined();
    await h.req('POST', url, { body });
    const refused = await h.req('POST', url, { body });
    expect(refused.status).toBe(429);
    expect(refused.json.error.code).toBe('rate_limited');
    expect(refused.headers['x-ratelimit-remaining']).toBe('0');
    expect(Number(refused.headers['x-ratelimit-reset'])).toBeGreaterThanOrEqual(59);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(29);
    expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(30);
  });

  it('Reset and Retry-After follow the bucket exactly (a clock the test moves)', async () => {
    let now = 1_000_000;
    const app = Fastify(errorOptions());
    installEdge(app);
    app.post('/paid', { onRequest: ipRateLimit(60, () => now) }, async () => ({ ok: true }));
    const call = () => app.inject({ method: 'POST', url: '/paid', payload: {} });
    const heads = (r: Awaited<ReturnType<typeof call>>) => [r.statusCode, r.headers['x-ratelimit-remaining'], r.headers['x-ratelimit-reset'], r.headers['retry-after']];
    expect(heads(await call())).toEqual([200, '59', '1', undefined]);
    for (let i = 0; i < 59; i++) await call();
    expect(heads(await call())).toEqual([429, '0', '60', '1']);
    now += 500;
    expect(heads(await call())).toEqual([429, '0', '60', '1']);
    now += 20_000;
    // 20.5 tokens back at one a second: 20 whole ones left after this request, 40.5 s to full.
    expect(heads(await call())).toEqual([200, '19', '41', undefined]);
    await app.close();
  });
});
