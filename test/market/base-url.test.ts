/**
 * URLs in the marketplace's own documents (ADR 0081; docs/marketplace.md "Discovery"): the
 * configured MARKETPLACE_PUBLIC_URL (test/market/public-url.test.ts), else the Host the caller
 * sent when it is a plain host[:port], else the address the request arrived at. A raw socket
 * sends what a client may: no Host at all (HTTP/1.0), or one with markup in it.
 */
import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { validHost } from '../../gateway/market/base-url.ts';
import { seller, signedListing } from '../fixtures/market.ts';
import { useMarket } from './harness.ts';

const h = useMarket();

/** One request written as is; the JSON body of the answer. */
async function raw(path: string, head: string): Promise<Record<string, unknown>> {
  const { hostname, port } = new URL(h.url);
  const socket = net.connect(Number(port), hostname);
  socket.write(`GET ${path} ${head}\r\n\r\n`);
  let out = '';
  socket.on('data', (d: Buffer) => (out += d.toString('utf8')));
  await new Promise((r) => socket.on('close', r));
  const [status, ...rest] = out.split('\r\n\r\n');
  expect(status).toMatch(/^HTTP\/1\.[01] 200/);
  return JSON.parse(rest.join('\r\n\r\n')) as Record<string, unknown>;
}

const endpoints = async (head: string) => (await raw('/.well-known/x402-marketplace', head)).endpoints as Record<string, string>;

describe('the marketplace base URL (ADR 0081)', () => {
  it('HTTP/1.0 without Host: the address the request arrived at, not "http://api"', async () => {
    const e = await endpoints('HTTP/1.0');
    expect(e.quote).toBe(`${h.url}/api/v1/route/quote`);
  });

  it('a Host with markup or a path in it is not copied: the address the request arrived at', async () => {
    for (const host of ['a"b<x>', 'a"b', 'evil.example/x', 'user@evil.example', 'x:1:2']) {
      const e = await endpoints(`HTTP/1.1\r\nHost: ${host}\r\nConnection: close`);
      expect(Object.values(e).every((u) => u.startsWith(`${h.url}/`)), host).toBe(true);
    }
  });

  it('a plain host[:port] is the caller\'s name for the marketplace, lower case; so is a fragment\'s how_to_pay', async () => {
    expect((await endpoints('HTTP/1.1\r\nHost: Market.Example:8443\r\nConnection: close')).quote).toBe('http://market.example:8443/api/v1/route/quote');
    const listed = await h.req('POST', '/api/v1/resources', { body: await signedListing(seller(), { name: 'Base url bison', endpoint: 'https://bison.example/x', price: '0.01' }) });
    expect(listed.status).toBe(201);
    const id = (listed.json as { resource_id: string }).resource_id;
    const good = await raw(`/api/v1/resources/${id}/fragment`, 'HTTP/1.1\r\nHost: market.example\r\nConnection: close');
    expect((good.how_to_pay as { quote: { url: string } }).quote.url).toBe('http://market.example/api/v1/route/quote');
    const bad = await raw(`/api/v1/resources/${id}/fragment`, 'HTTP/1.1\r\nHost: a"b<x>\r\nConnection: close');
    expect((bad.how_to_pay as { purchase: { url: string } }).purchase.url).toBe(`${h.url}/api/v1/purchase`);
  });

  it('validHost: exactly a host and an optional port, as URL parsing normalises it', () => {
    expect(validHost('api.example.com:8443', 'http')).toBe('api.example.com:8443');
    expect(validHost('[::1]:3001', 'http')).toBe('[::1]:3001');
    expect(validHost('example.com:80', 'http')).toBe('example.com');
    expect(validHost('example.com:80', 'https')).toBe('example.com:80');
    for (const bad of [undefined, '', 'a"b', 'a"b<x>', 'a/b', 'a@b', '1.2.3.4:99999', '[::1', 'ex ample', 'bücher.example']) expect(validHost(bad, 'http'), bad).toBeNull();
  });
});
