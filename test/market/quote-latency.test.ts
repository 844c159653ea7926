/* eslint-disable @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-member-access --
   assertions read parsed JSON response bodies. */
/**
 * The quote's latency ceiling (marketplace.md:93 `max_latency_ms` (integer); :121 "`max_latency_ms`
 * is a latency ceiling"): a listing's p50 is measured by the scanner's probes of a stock
 * `@x402/express` seller that answers after a set delay; a ceiling below that p50 finds no
 * listing, one at or above it quotes it.
 */
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import express from 'express';
import { HTTPFacilitatorClient } from '@x402/core/server';
import { ExactEvmScheme as ExactEvmServer } from '@x402/evm/exact/server';
import { paymentMiddleware, x402ResourceServer } from '@x402/express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seller, signedListing } from '../fixtures/market.ts';
import { useMarket } from './harness.ts';

const h = useMarket({ forward: { allowPrivate: true } });
/** How long the seller takes over each answer: the p50 the probes measure is at least this. */
const DELAY_MS = 150;
let server: Server;
let resourceId: string;

beforeAll(async () => {
  const s = seller();
  const rs = new x402ResourceServer(new HTTPFacilitatorClient({ url: `${h.url}/facilitator` })).register('eip155:8453', new ExactEvmServer());
  const app = express();
  app.use((_req, _res, next) => void setTimeout(next, DELAY_MS));
  app.use(paymentMiddleware({ 'GET /tides': { accepts: { scheme: 'exact', price: '$0.02', network: 'eip155:8453', payTo: s.evm.address }, description: 'Tide tables' } }, rs));
  server = app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}/tides`;
  const listed = await h.req('POST', '/api/v1/resources', { body: await signedListing(s, { name: 'Slow tide tables', tags: ['slowtides'], endpoint, price: '0.02' }) });
  expect(listed.status).toBe(201);
  resourceId = listed.json.resource_id;
}, 60_000);

afterAll(async () => {
  await new Promise((r) => server?.close(r));
});

const quote = (body: Record<string, unknown>) => h.req('POST', '/api/v1/route/quote', { body: { capability: 'slowtides', asset: 'USDC', ...body } });

describe('POST /api/v1/route/quote max_latency_ms (marketplace.md:93, :121)', () => {
  it('a listing scanned to p50 = N ms: a ceiling of N - 1 finds none (404 no_matching_resource), N and above quote it (201)', async () => {
    // Three probes: their median is one of them, a whole number of milliseconds.
    for (let i = 0; i < 3; i++) expect((await h.market.scanner.scanNow(resourceId))?.scan.outcome).toBe('ok');
    await h.deps.index.refresh();
    const p50 = (await h.req('GET', `/api/v1/resources/${resourceId}`)).json.latency_p50_ms as number;
    expect(Number.isInteger(p50)).toBe(true);
    expect(p50).toBeGreaterThanOrEqual(DELAY_MS);
    const under = await quote({ max_latency_ms: p50 - 1 });
    expect([under.status, under.json.error?.code]).toEqual([404, 'no_matching_resource']);
    for (const ceiling of [p50, p50 + 1, 60_000]) {
      const r = await quote({ max_latency_ms: ceiling });
      expect([ceiling, r.status, r.json.resource?.resource_id]).toEqual([ceiling, 201, resourceId]);
    }
    // No ceiling: the listing is quoted whatever its latency.
    expect((await quote({})).status).toBe(201);
    // A quote pinned to the listing by its id holds it to the same ceiling.
    const pinned = (max_latency_ms: number) => h.req('POST', '/api/v1/route/quote', { body: { resource_id: resourceId, asset: 'USDC', max_latency_ms } });
    const pinnedUnder = await pinned(p50 - 1);
    expect([pinnedUnder.status, pinnedUnder.json.error?.code]).toEqual([404, 'no_matching_resource']);
    expect((await pinned(p50)).status).toBe(201);
  });

  it('max_latency_ms that is not a positive integer is a bad field (400 invalid_body)', async () => {
    for (const max_latency_ms of [1.5, '200', -1, 0, null, true]) {
      const r = await quote({ max_latency_ms });
      expect({ max_latency_ms, status: r.status, code: r.json.error?.code }).toEqual({ max_latency_ms, status: 400, code: 'invalid_body' });
      expect(r.json.error.message).toContain('max_latency_ms');
    }
  });
});
