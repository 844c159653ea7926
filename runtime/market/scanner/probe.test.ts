/**
 * The probe's rules outside the engine (DESIGN §5 "Scanner", "Routed execution"): SSRF
 * refusal without the development switch, an unresolvable name as `unreachable`, no redirect followed, the body cap, and a v2
 * header whose payee is not the listing's. The scanner suites cover the rest with real sellers.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { encodePaymentRequiredHeader } from '@x402/core/http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { USDC_TOKEN } from '../../../machines/money/market.ts';
import { probe, PROBE_MAX_BODY_BYTES } from './probe.ts';
import { Semaphore } from './semaphore.ts';

const PAY_TO = '0xabcdefabcdefabcdefabcdefabcdefabcdefabcd';
const assets = [{ asset: 'USDC' as const, pay_to: PAY_TO, seller_price_atomic: '10000' }];
const SEPOLIA_TOKEN = { address: '0x036CbD53842c5426634e7929541eC2318f3dCF7e', name: 'USDC', version: '2', chainId: 84532 };
const required = (payTo: string, network: `${string}:${string}` = 'eip155:8453', asset: string = USDC_TOKEN.address) =>
  encodePaymentRequiredHeader({
    x402Version: 2,
    resource: { url: 'http://127.0.0.1/x', description: 'x', mimeType: 'application/json' },
    accepts: [{ scheme: 'exact', network, asset, amount: '10000', payTo, maxTimeoutSeconds: 60, extra: {} }],
  });
const v1Required = (network: string, asset: string) =>
  JSON.stringify({ x402Version: 1, error: 'pay', accepts: [{ scheme: 'exact', network, maxAmountRequired: '10000', resource: 'http://127.0.0.1/x', description: 'x', mimeType: 'application/json', payTo: PAY_TO, maxTimeoutSeconds: 60, asset, extra: {} }] });
let base: string;
let hitsAfterRedirect = 0;
const server = http.createServer((req, res) => {
  if (req.url === '/ok') res.writeHead(402, { 'payment-required': required(`0x${PAY_TO.slice(2).toUpperCase()}`) }).end();
  else if (req.url === '/other') res.writeHead(402, { 'payment-required': required('0x2222222222222222222222222222222222222222') }).end();
  else if (req.url === '/big') res.writeHead(402, { 'content-type': 'application/json' }).end(`{"pad":"${'x'.repeat(PROBE_MAX_BODY_BYTES)}"}`);
  else if (req.url === '/big503') res.writeHead(503, { 'content-type': 'text/html' }).end(`<p>${'x'.repeat(PROBE_MAX_BODY_BYTES)}</p>`);
  else if (req.url === '/big200') res.writeHead(200, { 'content-type': 'text/html' }).end(`<p>${'x'.repeat(PROBE_MAX_BODY_BYTES)}</p>`);
  else if (req.url === '/sepolia') res.writeHead(402, { 'payment-required': required(PAY_TO, 'eip155:84532', SEPOLIA_TOKEN.address) }).end();
  else if (req.url === '/sepolia-v1') res.writeHead(402, { 'content-type': 'application/json' }).end(v1Required('base-sepolia', SEPOLIA_TOKEN.address));
  else if (req.url === '/moved') res.writeHead(302, { location: '/ok' }).end();
  else {
    hitsAfterRedirect++;
    res.writeHead(404).end();
  }
});

beforeAll(async () => {
  server.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise((r) => server.close(r)));

const dev = { allowPrivate: true, timeoutMs: 2_000 };

describe('probe', () => {
  it('a matching v2 header is ok (addresses compared without case); another payee is pay_to_mismatch (ADR 0071)', async () => {
    expect((await probe({ endpoint: `${base}/ok`, method: 'GET', assets }, dev)).outcome).toBe('ok');
    expect(await probe({ endpoint: `${base}/other`, method: 'GET', assets }, dev)).toMatchObject({ outcome: 'pay_to_mismatch', http_status: 402 });
  });

  it("matches the USDC lane's own chain and token (USDC_NETWORK, USDC_TOKEN_ADDRESS): v2 by CAIP-2 id, v1 by name", async () => {
    for (const path of ['/sepolia', '/sepolia-v1']) {
      expect((await probe({ endpoint: `${base}${path}`, method: 'GET', assets }, dev, SEPOLIA_TOKEN)).outcome, path).toBe('ok');
      // The same offer is another lane's for a marketplace on Base.
      expect((await probe({ endpoint: `${base}${path}`, method: 'GET', assets }, dev)).outcome, path).toBe('mismatch');
    }
    expect((await probe({ endpoint: `${base}/ok`, method: 'GET', assets }, dev, SEPOLIA_TOKEN)).outcome).toBe('mismatch');
  });

  it('keeps the matching offer as the seller spells it: payTo, token, maxTimeoutSeconds, extra (ADR 0091); none for another payee', async () => {
    expect((await probe({ endpoint: `${base}/ok`, method: 'GET', assets }, dev)).seller_offers).toEqual([
      { asset: 'USDC', pay_to: `0x${PAY_TO.slice(2).toUpperCase()}`, asset_id: USDC_TOKEN.address, max_timeout_seconds: 60, extra: {} },
    ]);
    expect((await probe({ endpoint: `${base}/other`, method: 'GET', assets }, dev)).seller_offers).toBeUndefined();
  });

  it('refuses a loopback seller without the development switch, before any request', async () => {
    const r = await probe({ endpoint: `${base}/ok`, method: 'GET', assets }, { allowPrivate: false });
    expect(r).toMatchObject({ outcome: 'refused', http_status: null, latency_ms: null });
  });

  it('a name that does not resolve is unreachable, not refused: refused is for the SSRF rules (docs/marketplace.md "Scanner")', async () => {
    const nxdomain = () => Promise.reject(Object.assign(new Error('getaddrinfo ENOTFOUND rv.example'), { code: 'ENOTFOUND' }));
    const r = await probe({ endpoint: 'http://rv.example/paid', method: 'GET', assets }, { allowPrivate: false, lookupAll: nxdomain });
    expect(r).toEqual({ outcome: 'unreachable', http_status: null, latency_ms: null, detail: 'cannot resolve rv.example' });
    // No answer at all is the same as an error (an empty record).
    expect((await probe({ endpoint: 'http://rv.example/paid', method: 'GET', assets }, { allowPrivate: false, lookupAll: async () => [] })).outcome).toBe('unreachable');
    // A name that resolves to a private address is still the SSRF rules' refusal.
    const internal = async () => [{ address: '10.0.0.7', family: 4 }];
    expect((await probe({ endpoint: 'http://rv.example/paid', method: 'GET', assets }, { allowPrivate: false, lookupAll: internal })).outcome).toBe('refused');
  });

  it('does not follow a redirect and does not read past the cap', async () => {
    expect(await probe({ endpoint: `${base}/moved`, method: 'GET', assets }, dev)).toMatchObject({ outcome: 'http_error', http_status: 302 });
    expect(hitsAfterRedirect).toBe(0);
    expect(await probe({ endpoint: `${base}/big`, method: 'GET', assets }, dev)).toMatchObject({ outcome: 'malformed', http_status: 402 });
  });

  it('an answer over the cap is judged by its status: only a 402 is malformed for its size (docs/marketplace.md "Scanner": server_error for a 5xx, no_payment_required for a 2xx)', async () => {
    const down = await probe({ endpoint: `${base}/big503`, method: 'GET', assets }, dev);
    expect(down).toMatchObject({ outcome: 'server_error', http_status: 503 });
    expect(down.latency_ms).toEqual(expect.any(Number));
    expect(await probe({ endpoint: `${base}/big200`, method: 'GET', assets }, dev)).toMatchObject({ outcome: 'no_payment_required', http_status: 200 });
  });
});

describe('Semaphore', () => {
  it('never runs more than its limit at once and runs every task', async () => {
    const s = new Semaphore(3);
    let active = 0;
    let most = 0;
    const done = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        s.run(async () => {
          most = Math.max(most, ++active);
          await new Promise((r) => setTimeout(r, 2 + (i % 3)));
          active--;
          return i;
        }),
      ),
    );
    expect(most).toBe(3);
    expect(done).toEqual(Array.from({ length: 20 }, (_, i) => i));
    expect(s.pending).toBe(0);
  });
});
