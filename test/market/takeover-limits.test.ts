/**
 * How often a takeover calls the listed endpoint, and a takeover sent again (ADR 0072 "How
 * often the endpoint is called", "A repeat after success"; docs/marketplace.md "POST
 * /api/v1/resources"): one signed body sent many times at once reaches the endpoint once;
 * another attempt within the cooldown is 429 rate_limited with Retry-After, and after it the
 * endpoint is probed again; a successful takeover sent again answers the listing as it is,
 * with no event and its status kept. The scanner's rounds are an hour apart here, so every
 * request the seller counts after a listing's first scan is a takeover's.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ListingRecord } from '../../machines/listing/view.ts';
import { openEmbedded, openReal, realAvailable, type Backend } from '../helpers/backends.ts';
import { seller, signedListing, type Seller } from '../fixtures/market.ts';
import { startScanMarket, startScanRuntime, stopScanSuite, type ScanMarket, type ScanRuntime } from './scanner-harness.ts';
import { squattedListing, startTakeoverSeller, type TakeoverSeller } from './takeover-seller.ts';

let backend: Backend;
let rt: ScanRuntime;
let m: ScanMarket;
let endpoints: TakeoverSeller;
/**
 * Short, so the test sees it end; long enough that every copy, whose signatures are checked one
 * after another on a busy machine, arrives within it.
 */
const COOLDOWN_MS = 5_000;
const COPIES = 25;

beforeAll(async () => {
  backend = realAvailable ? await openReal() : await openEmbedded();
  rt = await startScanRuntime(backend.db, backend.bus, { intervalMs: 3_600_000 });
  m = await startScanMarket(rt, backend.db, { takeoverCooldownMs: COOLDOWN_MS });
  endpoints = await startTakeoverSeller();
}, 60_000);

afterAll(() => stopScanSuite({ rt, m, server: endpoints?.server, backend }));

const body = (s: Seller, path: string, name: string) => signedListing(s, { name, endpoint: `${endpoints.base}/${path}`, price: '0.02' });
const post = (b: unknown) => m.req('POST', '/api/v1/resources', { body: b });
const read = async (id: string) => (await m.req('GET', `/api/v1/resources/${id}`)).json as ListingRecord;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const journal = async (id: string) => (await backend.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM actor_events WHERE actor_id = $1`, [id])).rows[0]?.n;
const squatted = (path: string) => squattedListing(m, endpoints.base, path);

describe('takeover probes per listing (ADR 0072)', () => {
  // Whether the proof succeeds or not, the copies share one probe. A refused copy whose signatures
  // are checked only after the probe ended is inside the cooldown (429); a proven one then finds
  // the listing already its own, and answers it.
  const cases = [
    { title: 'an endpoint answering 404: copies refused', path: 'gone', proven: false, answers: ['403 forbidden', '429 rate_limited'] },
    { title: 'an endpoint whose 402 names the key: every copy answered with the listing', path: 'mine', proven: true, answers: ['200 none'] },
  ];
  it.each(cases)('$title; $path probed once for all copies, 429 within the cooldown, probed again after it', async (c) => {
    const listing = await squatted(c.path);
    const key = seller();
    if (c.proven) endpoints.payees[c.path] = [key.evm.address];
    const signed = await body(key, c.path, `Tide table ${c.path} by its owner`);
    const before = endpoints.hits[c.path] ?? 0;

    const sent = Date.now();
    const copies = await Promise.all(Array.from({ length: COPIES }, () => post(signed)));
    // Otherwise a late copy could be outside the cooldown and probe again: the test would say nothing.
    expect(Date.now() - sent).toBeLessThan(COOLDOWN_MS);
    expect(endpoints.hits[c.path]! - before).toBe(1);
    const answers = copies.map((r) => `${r.status} ${(r.json as { error?: { code?: string } }).error?.code ?? 'none'}`);
    expect(answers.filter((a) => !c.answers.includes(a))).toEqual([]);
    expect(answers).toContain(c.answers[0]);
    const takeovers = await backend.db.query(`SELECT 1 FROM actor_events WHERE actor_id = $1 AND event->>'type' = 'listing.take_over'`, [listing.resource_id]);
    expect(takeovers.rows).toHaveLength(c.proven ? 1 : 0);

    // Another key within the cooldown: refused before any request (a repeat of a proven body would be answered as it is, below).
    const other = await post(await body(seller(), c.path, `Tide table ${c.path} again`));
    expect(other.status).toBe(429);
    const refusal = (other.json as { error: { code: string; retryAfter: number } }).error;
    expect({ code: refusal.code, header: Number(other.headers['retry-after']) }).toEqual({ code: 'rate_limited', header: refusal.retryAfter });
    // What is left of the cooldown, in whole seconds.
    expect(refusal.retryAfter).toBeGreaterThanOrEqual(1);
    expect(refusal.retryAfter).toBeLessThanOrEqual(Math.ceil(COOLDOWN_MS / 1000));
    expect(endpoints.hits[c.path]! - before).toBe(1);

    await sleep(COOLDOWN_MS + 100);
    const later = await post(await body(seller(), c.path, `Tide table ${c.path} later`));
    expect(later.status).toBe(403);
    expect(endpoints.hits[c.path]! - before).toBe(2);
  });

  it('a successful takeover sent again answers the listing as it is: same status, no probe, no event', async () => {
    const listing = await squatted('tide');
    const owner = seller();
    endpoints.payees.tide = [owner.evm.address];
    const signed = await body(owner, 'tide', 'Tide table by its owner');
    const taken = await post(signed);
    expect(taken.status).toBe(200);
    const rec = taken.json as ListingRecord;
    expect(rec.provider_id).not.toBe(listing.provider_id);
    // As after any probe (docs/marketplace.md "status"): the squatter's pay_to_mismatch among the last five makes it degraded.
    expect(rec.status).toBe(rec.recent_scans.slice(0, 5).every((p) => p.outcome === 'ok') ? 'verified' : 'degraded');
    const events = await journal(listing.resource_id);
    const probes = endpoints.hits.tide;

    // Sent again within the cooldown: neither a 429 nor an update resetting the status to unverified.
    const again = await post(signed);
    expect(again.status).toBe(200);
    const rec2 = again.json as ListingRecord;
    expect({ status: rec2.status, provider_id: rec2.provider_id, scans: rec2.recent_scans.length }).toEqual({ status: rec.status, provider_id: rec.provider_id, scans: rec.recent_scans.length });
    expect(await journal(listing.resource_id)).toBe(events);
    expect(endpoints.hits.tide).toBe(probes);
    expect((await read(listing.resource_id)).status).toBe(rec.status);
  });
});
