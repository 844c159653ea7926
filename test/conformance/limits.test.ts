/* eslint-disable @typescript-eslint/no-unsafe-member-access --
   assertions read parsed JSON; its shape is checked against the OpenAPI document after the file. */
/** Spec "Limits": token buckets per key and per IP, rate-limit headers (the body cap: body-limit.test.ts). */
import http from 'node:http';
import { describe, expect, it } from 'vitest';
import { buildApp } from '../../gateway/app.ts';
import { useHarness, type Harness, type Limits } from './harness.ts';

const SMALL: Limits = { RATE_LIMIT_KEY_PER_MIN: 3, RATE_LIMIT_KEY_BURST: 3, RATE_LIMIT_IP_PER_MIN: 5, RATE_LIMIT_IP_BURST: 5 };

async function drainKey(h: Harness, key: string, from: string): Promise<number> {
  for (let n = 0; n < 1000; n++) if ((await h.req('GET', '/api/v1/balance', { key, from })).status === 429) return n;
  throw new Error('never limited');
}

describe('conformance: rate limits at the spec values', () => {
  const h = useHarness();

  it('Limits: "Requests per API key: 100 per minute, burst 100"; refusal is 429 rate_limited with Retry-After and retryAfter', async () => {
    const { keys } = await h().merchant();
    const start = Date.now();
    const allowed = await drainKey(h(), keys.test.secret, '127.0.0.2');
    const refill = Math.ceil(((Date.now() - start) / 60_000) * 100);
    expect(allowed).toBeGreaterThanOrEqual(100);
    expect(allowed).toBeLessThanOrEqual(100 + refill);
    const r = await h().req('GET', '/api/v1/balance', { key: keys.test.secret, from: '127.0.0.2' });
    expect(r.status).toBe(429);
    expect(r.json.error).toMatchObject({ type: 'invalid_request', code: 'rate_limited', retryAfter: 1 });
    expect(r.headers['retry-after']).toBe('1');
    expect(r.headers['x-ratelimit-limit']).toBe('100');
    expect(r.headers['x-ratelimit-remaining']).toBe('0');
  });

  it('Limits: "X-RateLimit-Limit (capacity of the tighter dimension), X-RateLimit-Remaining (floored), X-RateLimit-Reset (seconds until the bucket is full); Retry-After only on refused requests"', async () => {
    const { keys } = await h().merchant();
    const first = await h().req('GET', '/api/v1/balance', { key: keys.test.secret, from: '127.0.0.3' });
    expect(first.headers).toMatchObject({ 'x-ratelimit-limit': '100', 'x-ratelimit-remaining': '99', 'x-ratelimit-reset': '1' });
    expect(first.headers['retry-after']).toBeUndefined();
    for (let i = 0; i < 9; i++) await h().req('GET', '/api/v1/balance', { key: keys.test.secret, from: '127.0.0.3' });
    const tenth = await h().req('GET', '/api/v1/balance', { key: keys.test.secret, from: '127.0.0.3' });
    expect(Number(tenth.headers['x-ratelimit-remaining'])).toBe(89);
    expect(Number(tenth.headers['x-ratelimit-reset'])).toBeGreaterThanOrEqual(6);
    expect(Number(tenth.headers['x-ratelimit-reset'])).toBeLessThanOrEqual(7);
    // Without a key only the IP dimension applies (300).
    const anon = await h().req('GET', '/api/v1/balance', { from: '127.0.0.4' });
    expect(anon.headers['x-ratelimit-limit']).toBe('300');
  });

  it('Limits: "Requests per IP: 300 per minute", across keys', async () => {
    const ms = await Promise.all([1, 2, 3, 4].map(() => h().merchant()));
    const start = Date.now();
    let allowed = 0;
    outer: for (const m of ms) {
      for (let i = 0; i < 100; i++) {
        const r = await h().req('GET', '/api/v1/balance', { key: m.keys.test.secret, from: '127.0.0.5' });
        if (r.status === 429) {
          expect(r.headers['x-ratelimit-limit']).toBe('300');
          break outer;
        }
        allowed++;
      }
    }
    const refill = Math.ceil(((Date.now() - start) / 60_000) * 300) + 1;
    expect(allowed).toBeGreaterThanOrEqual(300);
    expect(allowed).toBeLessThanOrEqual(300 + refill);
  });
});

describe('conformance: rate-limit mechanics', () => {
  const h = useHarness(SMALL);

  it('Limits: "A request refused by the IP bucket does not consume the key\'s quota"', async () => {
    const a = await h().merchant();
    const b = await h().merchant();
    for (let i = 0; i < 5; i++) expect((await h().req('GET', '/api/v1/balance', { key: a.keys.test.secret, from: '127.0.1.1' })).status).toBe(i < 3 ? 200 : 429);
    const refused = await h().req('GET', '/api/v1/balance', { key: b.keys.test.secret, from: '127.0.1.1' });
    expect(refused.status).toBe(429);
    expect(refused.headers['x-ratelimit-limit']).toBe('5');
    // From another address the key's bucket is still full: the IP refusal took nothing from it.
    const elsewhere = await h().req('GET', '/api/v1/balance', { key: b.keys.test.secret, from: '127.0.1.2' });
    expect(elsewhere.status).toBe(200);
    expect(elsewhere.headers).toMatchObject({ 'x-ratelimit-limit': '3', 'x-ratelimit-remaining': '2' });
  });

  it('Limits: "token buckets": concurrent requests never overdraw a bucket', async () => {
    const { keys } = await h().merchant();
    const all = await Promise.all(Array.from({ length: 12 }, () => h().req('GET', '/api/v1/balance', { key: keys.test.secret, from: '127.0.1.4' })));
    expect(all.filter((r) => r.status === 200)).toHaveLength(3);
    expect(all.filter((r) => r.status === 429)).toHaveLength(9);
  });

  it('Issue 3: "Buckets must hold across several gateway processes" — two apps on one database share them', async () => {
    const second = await buildApp({ ...h().deps, lifecycle: { draining: false } });
    const url2 = await second.listen({ host: '127.0.0.1', port: 0 });
    try {
      const { keys } = await h().merchant();
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++) {
        const url = i % 2 ? url2 : h().url;
        statuses.push(await new Promise<number>((resolve, reject) =>
          http.get(`${url}/api/v1/balance`, { headers: { authorization: `Bearer ${keys.test.secret}` }, localAddress: '127.0.1.3' }, (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          }).on('error', reject),
        ));
      }
      expect(statuses).toEqual([200, 200, 200, 429]);
    } finally {
      await second.close();
    }
  });
});
