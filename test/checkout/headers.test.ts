/**
 * Hosted checkout headers and shell (spec Endpoints `/c/{id}`, `/widget.js`; Limits "Widget
 * script cache max-age 300"; Authentication 5 and 8; issue 6 items 3-5).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parsePaymentUri } from '../../machines/payment-intent/payment-uri.ts';
import { paymentDocSchema, paymentOutputs } from '../../runtime/chain/payment-tx.ts';
import { request } from '../conformance/harness.ts';
import type { CreatedMerchant } from '../../runtime/merchant/merchants.ts';
import { openCheckoutHarness, type CheckoutHarness } from './harness.ts';

let h: CheckoutHarness;
let shop: CreatedMerchant;
let bare: CreatedMerchant;
let intentId: string;

const EVIL = `Order </script><script>alert(1)</script> <img src=x onerror=alert(2)> & "q" \u2028 done`;

beforeAll(async () => {
  h = await openCheckoutHarness();
  shop = await h.merchant({ name: 'Shop <b>&</b>', origins: ['https://shop.example/cart?x=1', 'http://127.0.0.1:5555'] });
  bare = await h.merchant({ name: 'No Origins' });
  intentId = await h.intent(shop.merchant_id, { description: EVIL, success_url: 'https://shop.example/thanks' });
});

afterAll(async () => {
  await h?.close();
});

const get = (path: string, headers: Record<string, string> = {}) => request(h.url, 'GET', path, { headers });

function csp(headers: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of String(headers['content-security-policy']).split(';')) {
    const [name, ...rest] = part.trim().split(/\s+/);
    if (name) out[name] = rest.join(' ');
  }
  return out;
}

function expectPageSecurity(headers: Record<string, unknown>): void {
  const p = csp(headers);
  expect(p['default-src']).toBe("'none'");
  expect(p['script-src']).toBe("'self'");
  expect(p['style-src']).toBe("'self'");
  expect(p['connect-src']).toBe("'self'");
  expect(p['base-uri']).toBe("'none'");
  expect(String(headers['content-security-policy'])).not.toMatch(/unsafe-inline|unsafe-eval|https?:\/\/(?!shop\.example|127\.0\.0\.1:5555)/);
  expect(headers['x-content-type-options']).toBe('nosniff');
  expect(headers['referrer-policy']).toBe('no-referrer');
  expect(headers['content-type']).toBe('text/html; charset=utf-8');
}

describe('GET /c/{id}', () => {
  it('serves the shell with a strict CSP, nosniff, no referrer, and framing denied', async () => {
    const r = await get(`/c/${intentId}`);
    expect(r.status).toBe(200);
    expectPageSecurity(r.headers);
    expect(csp(r.headers)['frame-ancestors']).toBe("'none'");
    expect(r.headers['x-frame-options']).toBe('DENY');
    expect(r.headers['cache-control']).toBe('no-store');
  });

  it('has no inline script: the bundle is same-origin, the data a JSON block that round-trips the description', async () => {
    const r = await get(`/c/${intentId}`);
    const scripts = [...r.text.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)];
    expect(scripts).toHaveLength(2);
    for (const [, attrs, body] of scripts) {
      if (/type="application\/json"/.test(attrs!)) continue;
      expect(attrs).toMatch(/^ type="module" src="\/assets\/checkout\.[0-9a-f]{16}\.js"$/);
      expect(body).toBe('');
    }
    const json = scripts.find(([, a]) => /application\/json/.test(a!))![2]!;
    expect(json).not.toMatch(/[<>&\u2028]/);
    const data = JSON.parse(json) as { intent: { description: string; payment_uri: string }; merchant: { name: string }; status: { status: string; version: number }; events_url: string; embed: unknown };
    expect(data.intent.description).toBe(EVIL);
    expect(data.merchant.name).toBe('Shop <b>&</b>');
    expect(data.status).toMatchObject({ status: 'AWAITING_PAYMENT', version: 1 });
    expect(data.events_url).toBe(`/c/${intentId}/events?last_event_id=1`);
    expect(data.embed).toBeNull();
    expect(data.intent.payment_uri).toMatch(/^anm:tanm1\w+\?amount=1000000000&merchant_amount=980000000&fee_amount=20000000&fee_to=tanm1\w+&ref=pr1:\w+$/);
    // The URI and the document `anmpay wallet pay` reads describe the same transaction.
    const doc = paymentDocSchema.parse((await get(`/c/${intentId}/payment.json`)).json);
    const uri = parsePaymentUri(data.intent.payment_uri);
    expect(uri).toEqual({
      payment_address: doc.payment_address,
      amount: doc.anm_amount,
      merchant_amount: doc.merchant_amount,
      protocol_fee: doc.protocol_fee,
      treasury_address: doc.treasury_address,
      payment_reference: doc.payment_reference,
    });
    expect(paymentOutputs(doc)).toEqual([
      { to: uri.payment_address, amount: uri.merchant_amount },
      { to: uri.treasury_address, amount: uri.protocol_fee },
    ]);
    // The static summary escapes it too: no markup from the description reaches the document.
    expect(r.text).not.toContain('<script>alert');
    expect(r.text).not.toContain('<img src=x');
    expect(r.text).toContain('&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(r.text).toContain('Shop &lt;b&gt;&amp;&lt;/b&gt;');
  });

  it('unknown or malformed id: a 404 page with the same security headers', async () => {
    for (const path of ['/c/pay_aaaaaaaaaaaaaaaaaaaaaaaa', '/c/nope', '/c/pay_AAAAAAAAAAAAAAAAAAAAAAAA']) {
      const r = await get(path);
      expect(r.status, path).toBe(404);
      expectPageSecurity(r.headers);
      expect(csp(r.headers)['frame-ancestors']).toBe("'none'");
      expect(r.text).toContain('Checkout not found');
    }
  });

  it('embed=1 with the merchant publishable key: frame-ancestors from the allowed origins (normalised), no X-Frame-Options', async () => {
    const r = await get(`/c/${intentId}?embed=1&pk=${shop.keys.test.publishable}`);
    expect(r.status).toBe(200);
    expectPageSecurity(r.headers);
    expect(csp(r.headers)['frame-ancestors']).toBe('https://shop.example http://127.0.0.1:5555');
    expect(r.headers['x-frame-options']).toBeUndefined();
    const json = /<script type="application\/json" id="anm-checkout-data">([^<]*)<\/script>/.exec(r.text)![1]!;
    expect((JSON.parse(json) as { embed: unknown }).embed).toEqual({ origins: ['https://shop.example', 'http://127.0.0.1:5555'] });
  });

  it('embed=1 refuses (404) a missing key, a secret key, another merchant, another mode, or a merchant with no allowed origins', async () => {
    const other = await h.merchant({ origins: ['https://shop.example'] });
    const bareIntent = await h.intent(bare.merchant_id);
    const cases: Array<[string, string]> = [
      ['no key', `/c/${intentId}?embed=1`],
      ['secret key', `/c/${intentId}?embed=1&pk=${shop.keys.test.secret}`],
      ['other merchant', `/c/${intentId}?embed=1&pk=${other.keys.test.publishable}`],
      ['live key, test intent', `/c/${intentId}?embed=1&pk=${shop.keys.live.publishable}`],
      ['no origins', `/c/${bareIntent}?embed=1&pk=${bare.keys.test.publishable}`],
    ];
    for (const [what, path] of cases) {
      const r = await get(path);
      expect(r.status, what).toBe(404);
      expect(csp(r.headers)['frame-ancestors'], what).toBe("'none'");
    }
  });

  it('the operator sets allowed origins (normalised, replaced), with the operator token only', async () => {
    const m = await h.merchant();
    const token = h.services.operatorToken;
    const post = (body: unknown, auth = token) =>
      request(h.url, 'POST', `/ops/api/merchants/${m.merchant_id}/allowed-origins`, { headers: { authorization: `Bearer ${auth}` }, body });
    const ok = await post({ origins: ['https://a.example/x', 'https://a.example', 'http://localhost:8080/'] });
    expect(ok.status).toBe(200);
    expect(ok.json).toEqual({ id: m.merchant_id, allowed_origins: ['https://a.example', 'http://localhost:8080'] });
    const id = await h.intent(m.merchant_id);
    const page = await get(`/c/${id}?embed=1&pk=${m.keys.test.publishable}`);
    expect(csp(page.headers)['frame-ancestors']).toBe('https://a.example http://localhost:8080');
    expect((await post({ origins: ['javascript:alert(1)'] })).status).toBe(400);
    expect((await post({ origins: ['https://a.example'] }, 'opt_wrong_token_000000000000')).status).toBe(401);
    expect((await request(h.url, 'POST', '/ops/api/merchants/mer_nope/allowed-origins', { headers: { authorization: `Bearer ${token}` }, body: { origins: [] } })).status).toBe(404);
  });
});

describe('GET /widget.js and /assets', () => {
  it('widget.js: ETag, Cache-Control max-age=300, 304 on If-None-Match, JavaScript, nosniff, loadable cross-origin', async () => {
    const r = await get('/widget.js');
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(r.headers['cache-control']).toBe('public, max-age=300');
    expect(r.headers['x-content-type-options']).toBe('nosniff');
    expect(r.headers['cross-origin-resource-policy']).toBe('cross-origin');
    const etag = String(r.headers.etag);
    expect(etag).toMatch(/^"[0-9a-f]{16}"$/);
    expect(r.text).toContain('AnmPay');
    expect(r.text).not.toMatch(/https?:\/\/(?!www\.w3\.org)/);

    for (const inm of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
      const again = await get('/widget.js', { 'if-none-match': inm });
      expect(again.status, inm).toBe(304);
      expect(again.raw.length).toBe(0);
      expect(again.headers.etag).toBe(etag);
      expect(again.headers['cache-control']).toBe('public, max-age=300');
    }
    expect((await get('/widget.js', { 'if-none-match': '"stale"' })).status).toBe(200);
  });

  it('bundles are served by the project, immutable under a content hash; unknown assets are 404', async () => {
    const page = await get(`/c/${intentId}`);
    const js = /src="(\/assets\/checkout\.[0-9a-f]+\.js)"/.exec(page.text)![1]!;
    const css = /href="(\/assets\/page\.[0-9a-f]+\.css)"/.exec(page.text)![1]!;
    const a = await get(js);
    expect(a.status).toBe(200);
    expect(a.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(a.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(a.text).toContain('anm-checkout');
    // No CDN, no external font or script: the bundle names no other host.
    expect(a.text).not.toMatch(/https?:\/\/(?!www\.w3\.org)[a-z]/i);
    const c = await get(css);
    expect(c.headers['content-type']).toBe('text/css; charset=utf-8');
    expect(c.text).not.toMatch(/@import|url\(/);
    expect((await get('/assets/checkout.0000000000000000.js')).status).toBe(404);
  });
});
