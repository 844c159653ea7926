import { describe, expect, it } from 'vitest';
import { idem, intentBody, useHarness } from './harness.ts';

describe('smoke', () => {
  const h = useHarness();
  it('creates and reads', async () => {
    const m = await h().merchant();
    const key = m.keys.test.secret;
    const c = await h().req('POST', '/api/v1/payment-intents', { key, idem: idem(), body: intentBody() });
    console.log(c.status, c.headers, c.json);
    const g = await h().req('GET', `/api/v1/payment-intents/${c.json.id}`, { key });
    console.log(g.status, g.json);
    const l = await h().req('GET', `/api/v1/payment-intents?limit=2`, { key });
    console.log(l.status, l.json);
    const b = await h().req('GET', `/api/v1/balance`, { key });
    console.log(b.status, b.json);
    const x = await h().req('POST', `/api/v1/payment-intents/${c.json.id}/cancel`, { key });
    console.log(x.status, x.json?.status);
    const y = await h().req('POST', `/api/v1/payment-intents/${c.json.id}/cancel`, { key });
    console.log(y.status, y.json);
    const p = await h().req('GET', `/c/${c.json.id}/payment.json`);
    console.log(p.status, p.json);
    const z = await h().req('DELETE', `/api/v1/balance`, { key });
    console.log(z.status, z.headers.allow, z.json);
    expect(c.status).toBe(201);
  });
});
