/**
 * Taking a listing over (ADR 0072; docs/marketplace.md "POST /api/v1/resources"; DESIGN §5
 * "Listings"): a squatter lists an endpoint first; the endpoint's real owner, whose own 402
 * names its payTo, registers it and gets the listing, and quotes then name the owner's payTo.
 * A key the 402 does not name, the squatter coming back, and the owner while the endpoint is
 * down are all 403 with nothing changed. Sellers run on 127.0.0.1, started here; the
 * marketplace runs on real PostgreSQL and NATS when they are up.
 */
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ListingTakeOverEvent } from '../../machines/listing/events.ts';
import type { ListingRecord } from '../../machines/listing/view.ts';
import { USDC_TOKEN } from '../../machines/money/market.ts';
import { openEmbedded, openReal, realAvailable, type Backend } from '../helpers/backends.ts';
import { seller, signedListing, type Seller } from '../fixtures/market.ts';
import { startScanMarket, startScanRuntime, stopScanSuite, type ScanMarket, type ScanRuntime } from './scanner-harness.ts';

let backend: Backend;
let rt: ScanRuntime;
let m: ScanMarket;
let server: Server;
let base: string;
/** Who each endpoint's 402 pays, and whether it answers at all. */
const payees: Record<string, string[]> = {};
let up = true;
/** Until then every request waits, so probes made meanwhile are answered together. */
let holdUntil = 0;
const squatter = seller();
const owner = seller();
const third = seller();

beforeAll(async () => {
  backend = realAvailable ? await openReal() : await openEmbedded();
  rt = await startScanRuntime(backend.db, backend.bus);
  // No wait between takeover probes: this suite makes one attempt after another on a listing (the limits are takeover-limits.test.ts's).
  m = await startScanMarket(rt, backend.db, { takeoverCooldownMs: 0 });
  const app = express();
  app.use((req, _res, next) => (up ? next() : req.socket.destroy()));
  app.use((_req, _res, next) => void setTimeout(next, Math.max(0, holdUntil - Date.now())));
  // An x402 v1 402 offering the listed price to each payee the endpoint names.
  app.get('/:name', (req, res) => {
    res.status(402).json({
      x402Version: 1,
      error: 'X-PAYMENT header is required',
      accepts: (payees[req.params.name] ?? []).map((payTo) => ({
        scheme: 'exact', network: 'base', maxAmountRequired: '20000', resource: `${base}${req.path}`, description: 'forecast',
        mimeType: 'application/json', payTo, maxTimeoutSeconds: 60, asset: USDC_TOKEN.address, extra: { name: USDC_TOKEN.name, version: USDC_TOKEN.version },
      })),
    });
  });
  server = app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}, 60_000);

afterAll(() => stopScanSuite({ rt, m, server, backend }));

const register = async (s: Seller, path: string, name: string) => m.req('POST', '/api/v1/resources', { body: await signedListing(s, { name, endpoint: `${base}/${path}`, price: '0.02' }) });
const read = async (id: string) => (await m.req('GET', `/api/v1/resources/${id}`)).json as ListingRecord;
/** The fields a takeover would change: the scanner keeps adding probes meanwhile. */
const control = (r: ListingRecord) => ({ provider_id: r.provider_id, name: r.name, pay_to: r.accepted_assets.map((a) => a.pay_to) });
const takeovers = async (id: string) =>
  (await backend.db.query<{ event: ListingTakeOverEvent }>(`SELECT event FROM actor_events WHERE actor_id = $1 AND event->>'type' = 'listing.take_over' ORDER BY seq`, [id])).rows.map((r) => r.event);
const errorOf = (r: { status: number; json: unknown }) => ({ status: r.status, code: (r.json as { error?: { code?: string } }).error?.code });

describe('listing takeover by the endpoint\'s proven owner (ADR 0072)', () => {
  it('the owner whose payTo the 402 names takes the squatted listing over; others, the squatter again and an owner whose endpoint is down are refused', async () => {
    payees.forecast = [owner.evm.address];
    const squatted = await register(squatter, 'forecast', 'Zebrafish tide forecast');
    expect(squatted.status).toBe(201);
    const listing = squatted.json as ListingRecord;
    const before = control(listing);

    // Refused, table-driven: the 402 names none of these keys' payTo now.
    const refusals: Array<{ who: string; s: Seller; down?: boolean; says: string }> = [
      { who: 'a third key', s: third, says: `it pays USDC to ${owner.evm.address}` },
      { who: 'the owner while the endpoint is down', s: owner, down: true, says: 'it answered unreachable' },
    ];
    for (const r of refusals) {
      up = !r.down;
      const res = await register(r.s, 'forecast', `Zebrafish by ${r.who}`);
      up = true;
      expect(errorOf(res), r.who).toEqual({ status: 403, code: 'forbidden' });
      const message = (res.json as { error: { message: string } }).error.message;
      expect(message, r.who).toContain("the endpoint's own 402 must name your payTo");
      expect(message, r.who).toContain(r.says);
      expect(control(await read(listing.resource_id)), r.who).toEqual(before);
    }
    expect(await takeovers(listing.resource_id)).toEqual([]);

    const taken = await register(owner, 'forecast', 'Zebrafish tide forecast by its owner');
    expect(taken.status).toBe(200);
    const rec = taken.json as ListingRecord;
    expect(rec.provider_id).not.toBe(listing.provider_id);
    expect(control(rec)).toEqual({ provider_id: rec.provider_id, name: 'Zebrafish tide forecast by its owner', pay_to: [owner.evm.address] });
    // The takeover's own probe is the newest scan, judged against the owner's terms.
    expect(rec.recent_scans[0]).toMatchObject({ status: 402, outcome: 'ok' });
    // Status as after any probe (docs/marketplace.md "status"): the squatter's probes among the last five make it degraded.
    expect(rec.status).toBe(rec.recent_scans.slice(0, 5).every((p) => p.outcome === 'ok') ? 'verified' : 'degraded');
    expect(control(await read(listing.resource_id))).toEqual(control(rec));

    // The journal holds the proof and the ownership it was checked against.
    const [event, ...more] = await takeovers(listing.resource_id);
    expect(more).toEqual([]);
    expect(event).toMatchObject({ provider_id: rec.provider_id, previous_provider_id: listing.provider_id });
    expect(Math.floor((event?.previous_owner_since ?? 0) / 1000)).toBe(listing.created_at);
    // The registration's ownership is generation 0 (ADR 0077).
    expect(event?.previous_owner_generation).toBe(0);
    expect(event?.proof).toMatchObject({ outcome: 'ok', http_status: 402, payees: [{ asset: 'USDC', pay_to: [owner.evm.address] }] });

    // Quotes now name the owner as the seller leg.
    const q = await m.req('POST', '/api/v1/route/quote', { body: { capability: 'zebrafish', asset: 'USDC' } });
    expect(q.status).toBe(201);
    const accepts = (q.json as { payment_requirements: { accepts: Array<{ extra: { legs: { seller: { payTo: string } } } }> } }).payment_requirements.accepts;
    expect(accepts[0]?.extra.legs.seller.payTo.toLowerCase()).toBe(owner.evm.address.toLowerCase());

    // The squatter registering again is a takeover like any other key's: refused while the 402 names the owner.
    const back = await register(squatter, 'forecast', 'Zebrafish tide forecast');
    expect(errorOf(back)).toEqual({ status: 403, code: 'forbidden' });
    expect(control(await read(listing.resource_id))).toEqual(control(rec));
    // The owner still updates its listing with its own key, without a probe.
    up = false;
    const upd = await register(owner, 'forecast', 'Zebrafish tide forecast, hourly');
    up = true;
    expect({ status: upd.status, name: (upd.json as ListingRecord).name }).toEqual({ status: 200, name: 'Zebrafish tide forecast, hourly' });
    // Once the endpoint's 402 names the squatter's payTo instead, its registration takes the listing back.
    payees.forecast = [squatter.evm.address];
    const again = await register(squatter, 'forecast', 'Zebrafish tide forecast');
    expect({ status: again.status, provider_id: (again.json as ListingRecord).provider_id }).toEqual({ status: 200, provider_id: listing.provider_id });
    const chain = await takeovers(listing.resource_id);
    expect(chain.map((e) => [e.previous_provider_id, e.provider_id, e.previous_owner_generation])).toEqual([[listing.provider_id, rec.provider_id, 0], [rec.provider_id, listing.provider_id, 1]]);
    // Squatter, owner, squatter again: the scanner's next probes name the third ownership, not only its key (ADR 0077).
    const probedAt = async (gen: number) =>
      (await backend.db.query(`SELECT 1 FROM actor_events WHERE actor_id = $1 AND event->>'type' = 'listing.probed' AND (event->>'owner_generation')::int = $2 AND event->>'provider_id' = $3`, [listing.resource_id, gen, listing.provider_id])).rows.length;
    for (let i = 0; i < 100 && (await probedAt(2)) === 0; i++) await new Promise((r) => setTimeout(r, 50));
    expect(await probedAt(2)).toBeGreaterThan(0);
  });

  it('two takeovers racing end with one owner, each checked against the ownership it replaced', async () => {
    const rival = seller();
    payees.shared = [owner.evm.address, rival.evm.address];
    const first = (await register(squatter, 'shared', 'Narwhal shared forecast')).json as ListingRecord;
    // Both proofs are made against the squatter's ownership: whichever is applied second is stale.
    holdUntil = Date.now() + 500;
    const [a, b] = await Promise.all([register(owner, 'shared', 'Narwhal by the owner'), register(rival, 'shared', 'Narwhal by the rival')]);
    // Both keys prove control, so the stale one proves it again against the new owner: one owner after the other, never two.
    expect([a.status, b.status]).toEqual([200, 200]);
    const stale = await backend.db.query<{ event_id: string }>(`SELECT event_id FROM processed_events WHERE actor_id = $1 AND outcome = 'ignored' AND event_id LIKE 'take-over:%'`, [first.resource_id]);
    expect(stale.rows).toHaveLength(1);
    const events = await takeovers(first.resource_id);
    expect(events).toHaveLength(2);
    expect(events[0]?.previous_provider_id).toBe(first.provider_id);
    expect(events[1]?.previous_provider_id).toBe(events[0]?.provider_id);
    expect(events[1]?.previous_owner_since).toBe(events[0]?.at);
    expect(events.map((e) => e.previous_owner_generation)).toEqual([0, 1]);
    expect((await read(first.resource_id)).provider_id).toBe(events[1]?.provider_id);
  });
});
