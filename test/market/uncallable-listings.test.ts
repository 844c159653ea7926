/* eslint-disable @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-call --
   assertions read parsed JSON response bodies. */
/**
 * Listings the marketplace will not send a buyer to (ADR 0080). DESIGN §5 "Quote" picks the
 * best listing: never an `offline` one (its latency is null, which must not pass as "no data").
 * A listing whose endpoint's 402 pays someone else (`pay_to_mismatch`, ADR 0071) is held out of
 * search, the Bazaar list and search and `/.well-known/x402`; marketplace.md "Endpoints":
 * `GET /api/v1/resources` answers "all listings", so it stays there and at its own URL.
 */
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import express from 'express';
import { HTTPFacilitatorClient } from '@x402/core/server';
import { ExactEvmScheme as ExactEvmServer } from '@x402/evm/exact/server';
import { paymentMiddleware, x402ResourceServer } from '@x402/express';
import { withBazaar } from '@x402/extensions/bazaar';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seller, signedListing, type Seller } from '../fixtures/market.ts';
import { useMarket } from './harness.ts';

const h = useMarket({ forward: { allowPrivate: true, timeoutMs: 2_000 } });
let s: Seller;
let server: Server;
let base: string;
const ids: Record<string, string> = {};
const OTHER = '0x00000000000000000000000000000000000b0b00';

beforeAll(async () => {
  s = seller();
  const rs = new x402ResourceServer(new HTTPFacilitatorClient({ url: `${h.url}/facilitator` })).register('eip155:8453', new ExactEvmServer());
  const accepts = (payTo: string) => ({ scheme: 'exact', price: '$0.02', network: 'eip155:8453', payTo }) as const;
  const app = express();
  app.use(paymentMiddleware({ 'GET /own': { accepts: accepts(s.evm.address), description: 'own' }, 'GET /squat': { accepts: accepts(OTHER), description: 'squat' } }, rs));
  server = app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  // A port nobody listens on: every probe is unanswered.
  const closed = express().listen(0, '127.0.0.1');
  await new Promise((r) => closed.once('listening', r));
  const gone = `http://127.0.0.1:${(closed.address() as AddressInfo).port}/gone`;
  await new Promise((r) => closed.close(r));
  for (const [key, endpoint] of [['own', `${base}/own`], ['squat', `${base}/squat`], ['gone', gone]] as const) {
    const r = await h.req('POST', '/api/v1/resources', { body: await signedListing(s, { name: `Tide tables ${key}`, description: 'Tide tables', tags: ['tides', `tides${key}`], endpoint, price: '0.02' }) });
    expect(r.status).toBe(201);
    ids[key] = r.json.resource_id;
  }
}, 60_000);

afterAll(async () => {
  await new Promise((r) => server?.close(r));
});

describe('a listing whose endpoint pays someone else (pay_to_mismatch)', () => {
  it('is held out of search, the Bazaar list and search and /.well-known/x402, and stays readable by id and in the full list', async () => {
    expect((await h.market.scanner.scanNow(ids.squat!))?.scan.outcome).toBe('pay_to_mismatch');
    expect((await h.market.scanner.scanNow(ids.own!))?.scan.outcome).toBe('ok');
    await h.deps.index.refresh();
    const searched = (await h.req('GET', '/api/v1/search?capability=tides')).json.data.map((r: { resource_id: string }) => r.resource_id);
    expect(searched).toContain(ids.own);
    expect(searched).not.toContain(ids.squat);
    expect((await h.req('GET', '/api/v1/search?capability=tidessquat')).json.data).toEqual([]);
    const bazaar = withBazaar(new HTTPFacilitatorClient({ url: h.url })).extensions.bazaar;
    const listed = (await bazaar.listResources({ limit: 1000 })).items.map((i) => i.resource);
    expect(listed).toContain(`${base}/own`);
    expect(listed).not.toContain(`${base}/squat`);
    expect((await bazaar.search({ query: 'tides' })).resources.map((r) => r.resource)).not.toContain(`${base}/squat`);
    const wellKnown = (await h.req('GET', '/.well-known/x402')).json.resources;
    expect(wellKnown).toContain(`${base}/own`);
    expect(wellKnown).not.toContain(`${base}/squat`);
    const byId = await h.req('GET', `/api/v1/resources/${ids.squat}`);
    expect([byId.status, byId.json.recent_scans[0].outcome]).toEqual([200, 'pay_to_mismatch']);
    const all: string[] = [];
    let cursor: string | null = '';
    while (cursor !== null) {
      const page: { data: Array<{ resource_id: string }>; next_cursor: string | null } = (await h.req('GET', `/api/v1/resources?limit=100${cursor ? `&cursor=${cursor}` : ''}`)).json;
      all.push(...page.data.map((r) => r.resource_id));
      cursor = page.next_cursor;
    }
    expect(all).toContain(ids.squat);
    expect((await h.req('POST', '/api/v1/route/quote', { body: { capability: 'tidessquat', asset: 'USDC' } })).status).toBe(404);
    // Named by id (ADR 0085), it is refused all the same, saying why.
    const pinned = await h.req('POST', '/api/v1/route/quote', { body: { resource_id: ids.squat, asset: 'USDC' } });
    expect([pinned.status, pinned.json.error.code]).toEqual([404, 'no_matching_resource']);
    expect(pinned.json.error.message).toContain('pay_to_mismatch');
  });
});

describe('an offline listing is not quoted (DESIGN §5 "Quote")', () => {
  it('after three unanswered probes it is offline with no latency, and a quote for it finds nothing; it stays searchable', { timeout: 30_000 }, async () => {
    expect((await h.req('POST', '/api/v1/route/quote', { body: { capability: 'tidesgone', asset: 'USDC' } })).status).toBe(201);
    expect((await h.req('POST', '/api/v1/route/quote', { body: { resource_id: ids.gone, asset: 'USDC' } })).status).toBe(201);
    for (let i = 0; i < 3; i++) expect((await h.market.scanner.scanNow(ids.gone!))?.scan.outcome).toBe('unreachable');
    await h.deps.index.refresh();
    const record = (await h.req('GET', `/api/v1/resources/${ids.gone}`)).json;
    expect([record.status, record.latency_p50_ms]).toEqual(['offline', null]);
    const none = await h.req('POST', '/api/v1/route/quote', { body: { capability: 'tidesgone', asset: 'USDC' } });
    expect([none.status, none.json.error.code]).toEqual([404, 'no_matching_resource']);
    const pinned = await h.req('POST', '/api/v1/route/quote', { body: { resource_id: ids.gone, asset: 'USDC' } });
    expect([pinned.status, pinned.json.error.code]).toEqual([404, 'no_matching_resource']);
    expect(pinned.json.error.message).toContain('offline');
    // A capability both match: the answered listing.
    const q = await h.req('POST', '/api/v1/route/quote', { body: { capability: 'tides', asset: 'USDC' } });
    expect([q.status, q.json.resource?.resource_id]).toEqual([201, ids.own]);
    expect((await h.req('GET', '/api/v1/search?capability=tidesgone')).json.data.map((r: { resource_id: string }) => r.resource_id)).toEqual([ids.gone]);
  });
});
