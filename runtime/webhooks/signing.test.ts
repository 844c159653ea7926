import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { newSecret, sign, signatureHeader, signedString } from './signing.ts';

describe('webhook signing (spec: Events > Verification)', () => {
  it('signs v1:<timestamp>:<event id>:<raw body> with HMAC-SHA256, lowercase hex', () => {
    const body = '{"id":"evt_1","type":"payment.confirmed","created":1,"data":{"note":"é ✓"}}';
    expect(signedString(1795267200, 'evt_1', body)).toBe(`v1:1795267200:evt_1:${body}`);
    const want = createHmac('sha256', 'whsec_k').update(Buffer.from(`v1:1795267200:evt_1:${body}`, 'utf8')).digest('hex');
    expect(sign('whsec_k', 1795267200, 'evt_1', body)).toBe(want);
    expect(want).toMatch(/^[0-9a-f]{64}$/);
  });

  it('puts one v1= entry per active secret, newest first, comma-separated', () => {
    const h = signatureHeader(['whsec_new', 'whsec_old'], 10, 'evt_2', '{}');
    expect(h).toBe(`v1=${sign('whsec_new', 10, 'evt_2', '{}')},v1=${sign('whsec_old', 10, 'evt_2', '{}')}`);
  });

  it('makes whsec_ secrets of 32 random bytes', () => {
    const a = newSecret();
    expect(a).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    expect(newSecret()).not.toBe(a);
  });
});
