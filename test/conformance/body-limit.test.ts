/* eslint-disable @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-member-access --
   assertions read parsed JSON. */
/**
 * Spec "Limits" (request body 256 KiB) and "Errors" (413 checked before buffering), in the
 * order of docs/errors.md: "Requests are judged in this order, and the first refusal wins: the
 * per-IP rate limit, the API key (401), the account (403), the key's rate limit (429), the
 * Idempotency-Key header, the body". A body over the cap is a body refusal: it waits its turn.
 */
import http from 'node:http';
import { describe, expect, it } from 'vitest';
import { idem, intentBody, useHarness, type Harness } from './harness.ts';

const CAP = 256 * 1024;
const CHUNK = Buffer.alloc(64 * 1024, 0x20);

/** Announced: a Content-Length over the cap, 13 bytes sent, never ended. Streamed: chunked, past the cap. */
type How = 'announced' | 'streamed';

interface Sent {
  status: number;
  headers: http.IncomingHttpHeaders;
  json: any; // eslint-disable-line @typescript-eslint/no-explicit-any -- assertions read arbitrary fields
}

interface Over {
  key?: string;
  idem?: string;
  from?: string;
  authorization?: string;
}

function oversized(url: string, path: string, how: How, o: Over = {}): Promise<Sent> {
  const headers: Record<string, string | number> = { 'content-type': 'application/json' };
  if (o.key) headers.authorization = `Bearer ${o.key}`;
  if (o.authorization) headers.authorization = o.authorization;
  if (o.idem) headers['idempotency-key'] = o.idem;
  if (how === 'announced') headers['content-length'] = 10 * 1024 * 1024;
  else headers['transfer-encoding'] = 'chunked';
  return new Promise((resolve, reject) => {
    const u = new URL(path, url);
    const r = http.request({ method: 'POST', hostname: u.hostname, port: u.port, path: u.pathname, headers, agent: false, localAddress: o.from }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => {
        resolve({ status: res.statusCode ?? 0, headers: res.headers, json: JSON.parse(text) });
        r.destroy();
      });
    });
    r.on('error', reject);
    r.flushHeaders();
    if (how === 'announced') {
      r.write('{"amount":"1"');
      return;
    }
    for (let sent = 0; sent <= CAP && !r.destroyed; sent += CHUNK.length) r.write(CHUNK);
    r.end();
  });
}

function expectRefusal(r: Sent, status: number, code: string): void {
  expect([r.status, r.json.error.code]).toEqual([status, code]);
  expect(r.json.error.type).toBe('invalid_request');
  expect(r.json.error.request_id).toBe(r.headers['request-id']);
}

describe('conformance: body limit', () => {
  const h = useHarness();

  it.each<How>(['announced', 'streamed'])('Limits: "Request body 256 KiB"; Errors: "413 payload_too_large: body over 256 KiB; checked before buffering" (%s)', async (how) => {
    const { keys } = await h().merchant();
    expectRefusal(await oversized(h().url, '/api/v1/payment-intents', how, { key: keys.test.secret, idem: idem() }), 413, 'payload_too_large');
  });

  it('Limits: a body of exactly 256 KiB is read (not 413)', async () => {
    const { keys } = await h().merchant();
    const json = '{"amount":"1"}';
    const body = Buffer.from(json.slice(0, -1) + ' '.repeat(CAP - json.length) + '}');
    expect(body.length).toBe(CAP);
    const r = await h().req('POST', '/api/v1/payment-intents', { key: keys.test.secret, idem: 'big', body });
    expect(r.status).toBe(201);
  });
});

describe('conformance: a body over the cap is judged at its turn (docs/errors.md "Requests are judged in this order")', () => {
  // Two requests a minute per IP and three per key: each dimension can be drained alone.
  const h = useHarness({ RATE_LIMIT_KEY_PER_MIN: 3, RATE_LIMIT_KEY_BURST: 3, RATE_LIMIT_IP_PER_MIN: 2, RATE_LIMIT_IP_BURST: 2 });
  let n = 0;
  const address = () => `127.0.6.${++n}`;
  const create = (how: How, o: Over) => oversized(h().url, '/api/v1/payment-intents', how, o);
  const secret = async (x: Harness) => (await x.merchant()).keys.test.secret;

  // Each case sets its refusal up and sends one body over the cap; the refusal named first in docs/errors.md wins.
  const ORDER: Array<[string, number, string, (how: How) => Promise<Sent>]> = [
    ['over the per-IP rate limit', 429, 'rate_limited', async (how) => {
      const key = await secret(h());
      const from = address();
      // Within the limit a body over the cap is 413; the third request from the address is over it.
      for (let i = 0; i < 2; i++) expectRefusal(await create(how, { key, idem: idem(), from }), 413, 'payload_too_large');
      const r = await create(how, { key, idem: idem(), from });
      expect(r.headers).toMatchObject({ 'x-ratelimit-limit': '2', 'x-ratelimit-remaining': '0', 'retry-after': String(r.json.error.retryAfter) });
      return r;
    }],
    ['a bad API key (401)', 401, 'unauthorized', (how) => create(how, { key: `ask_test_${'x'.repeat(32)}`, idem: idem(), from: address() })],
    ['no API key (401)', 401, 'unauthorized', (how) => create(how, { idem: idem(), from: address() })],
    ['a suspended account (403)', 403, 'forbidden', async (how) => {
      const m = await h().merchant();
      await h().services.merchants.setStatus(m.merchant_id, 'suspended');
      return create(how, { key: m.keys.test.secret, idem: idem(), from: address() });
    }],
    ["a key over its rate limit (429)", 429, 'rate_limited', async (how) => {
      const key = await secret(h());
      for (let i = 0; i < 3; i++) expect((await h().req('GET', '/api/v1/balance', { key, from: address() })).status).toBe(200);
      const r = await create(how, { key, idem: idem(), from: address() });
      expect(r.headers).toMatchObject({ 'x-ratelimit-limit': '3', 'x-ratelimit-remaining': '0' });
      return r;
    }],
    ['no Idempotency-Key header', 400, 'idempotency_key_required', async (how) => create(how, { key: await secret(h()), from: address() })],
    ['nothing else wrong: the body (413)', 413, 'payload_too_large', async (how) => {
      const r = await create(how, { key: await secret(h()), idem: idem(), from: address() });
      // Admitted as far as the body: its rate-limit headers are those of any admitted request.
      expect(r.headers).toMatchObject({ 'x-ratelimit-limit': '2', 'x-ratelimit-remaining': '1' });
      return r;
    }],
  ];

  it.each((['announced', 'streamed'] as const).flatMap((how) => ORDER.map(([rule, status, code, send]) => [rule, how, status, code, send] as const)))(
    'docs/errors.md "the first refusal wins": %s, with a body over 256 KiB (%s)',
    async (_rule, how, status, code, send) => {
      expectRefusal(await send(how), status, code);
    },
  );

  it('docs/errors.md "A request without a valid key never learns anything about its body": every POST route is 401 before 413, then 413', async () => {
    const routes = [
      '/api/v1/payment-intents',
      '/api/v1/payment-intents/pay_aaaaaaaaaaaaaaaaaaaaaaaa/cancel',
      '/api/v1/refunds',
      '/api/v1/refunds/re_aaaaaaaaaaaaaaaaaaaaaaaa/submit',
      '/api/v1/invoices',
      '/api/v1/invoices/inv_aaaaaaaaaaaaaaaaaaaaaaaa/finalize',
    ];
    for (const path of routes) {
      expectRefusal(await oversized(h().url, path, 'announced', { idem: idem(), from: address() }), 401, 'unauthorized');
      expectRefusal(await oversized(h().url, path, 'announced', { key: await secret(h()), idem: idem(), from: address() }), 413, 'payload_too_large');
    }
  });

  it('the operator API: a wrong operator token is 401 before 413', async () => {
    const path = '/ops/api/merchants';
    expectRefusal(await oversized(h().url, path, 'announced', { authorization: 'Bearer wrong', from: address() }), 401, 'unauthorized');
    expectRefusal(await oversized(h().url, path, 'announced', { authorization: `Bearer ${h().deps.operatorToken}`, from: address() }), 413, 'payload_too_large');
  });

  it('a body within the cap is still judged as before: bad key with bad JSON is 401', async () => {
    const r = await h().req('POST', '/api/v1/payment-intents', { key: `ask_test_${'x'.repeat(32)}`, idem: idem(), body: '{', from: address() });
    expect([r.status, r.json.error.code]).toEqual([401, 'unauthorized']);
    const ok = await h().req('POST', '/api/v1/payment-intents', { key: await secret(h()), idem: idem(), body: intentBody(), from: address() });
    expect(ok.status).toBe(201);
  });
});
