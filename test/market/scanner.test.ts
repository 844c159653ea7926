/**
 * The scanner against sellers on 127.0.0.1 (DESIGN §5 "Scanner"; issue 21 "What must be
 * shown"): a stock `@x402/express` seller (v2 header) and a v1 JSON-body seller that answer
 * well, a malformed 402, a 200 without payment, a price that does not match, a seller that
 * never answers, and one that goes down for a while. Status, uptime, latency and score follow;
 * `score_label` is `insufficient_data` until five observations.
 */
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import express from 'express';
import { x402Client } from '@x402/core/client';
import { decodePaymentRequiredHeader, encodePaymentSignatureHeader } from '@x402/core/http';
import { HTTPFacilitatorClient } from '@x402/core/server';
import { ExactEvmScheme as ExactEvmClient } from '@x402/evm';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { ExactEvmScheme as ExactEvmServer } from '@x402/evm/exact/server';
import { paymentMiddleware, x402ResourceServer } from '@x402/express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LATENCY_BAD_MS } from '../../machines/listing/score.ts';
import type { ListingRecord } from '../../machines/listing/view.ts';
import { USDC_TOKEN } from '../../machines/money/market.ts';
import { openEmbedded, openReal, realAvailable, waitFor, type Backend } from '../helpers/backends.ts';
import { cliJson, runCli } from '../helpers/cli.ts';
import { seller, signedListing, signLeg, type Seller } from '../fixtures/market.ts';
import { FEE_ADDRESSES } from './harness.ts';
import { OPERATOR_TOKEN, startScanMarket, startScanRuntime, stopScanSuite, type ScanMarket, type ScanRuntime } from './scanner-harness.ts';

let backend: Backend;
let rt: ScanRuntime;
let m: ScanMarket;
let s: Seller;
let server: Server;
let base: string;
let up = true;
const SLOW_MS = 500;
/**
 * Probe timeout: six times SLOW_MS, so the slow seller's answer is not timed out on a loaded
 * machine; the seller that never answers needs two of them before its fifth observation.
 */
const PROBE_TIMEOUT_MS = 3_000;
const ids: Record<string, string> = {};
/** Every record read while waiting, to check what was shown on the way. */
const seen: Record<string, ListingRecord[]> = {};

beforeAll(async () => {
  backend = realAvailable ? await openReal() : await openEmbedded();
  rt = await startScanRuntime(backend.db, backend.bus, { forward: { allowPrivate: true, timeoutMs: PROBE_TIMEOUT_MS } });
  m = await startScanMarket(rt, backend.db);
  s = seller();
  const rs = new x402ResourceServer(new HTTPFacilitatorClient({ url: `${m.url}/facilitator` })).register('eip155:8453', new ExactEvmServer());
  const accepts = (price: string, payTo = s.evm.address) => ({ scheme: 'exact', price, network: 'eip155:8453', payTo }) as const;
  const app = express();
  app.use('/flaky', (req, _res, next) => (up ? next() : req.socket.destroy()));
  // Answers its 402 late, so probes are in flight while its owner changes the price.
  app.use('/slow', (_req, _res, next) => void setTimeout(next, SLOW_MS));
  app.use(
    paymentMiddleware(
      { 'GET /good': { accepts: accepts('$0.02'), description: 'Good' }, 'GET /flaky': { accepts: accepts('$0.02'), description: 'Flaky' }, 'GET /pricey': { accepts: accepts('$0.03'), description: 'Pricey' },
        'GET /slow': { accepts: accepts('$0.02'), description: 'Slow' },
        // Listed by `s`, but the endpoint's own 402 pays another seller: an endpoint `s` does not control.
        'GET /squatted': { accepts: accepts('$0.02', seller().evm.address), description: 'Squatted' },
      },
      rs,
    ),
  );
  app.get('/v1', (req, res) => {
    res.status(402).json({
      x402Version: 1,
      error: 'X-PAYMENT header is required',
      accepts: [{ scheme: 'exact', network: 'base', maxAmountRequired: '20000', resource: `${base}/v1`, description: 'v1', mimeType: 'application/json', payTo: s.evm.address, maxTimeoutSeconds: 60, asset: USDC_TOKEN.address, extra: { name: USDC_TOKEN.name, version: USDC_TOKEN.version } }],
    });
  });
  app.get(['/good', '/flaky', '/pricey', '/squatted', '/slow'], (_req, res) => res.json({ served: true }));
  app.get('/malformed', (_req, res) => res.status(402).type('text/plain').send('pay me, somehow'));
  app.get('/free', (_req, res) => res.json({ free: true }));
  app.get('/sleepy', () => undefined);
  server = app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  for (const name of ['good', 'v1', 'malformed', 'free', 'pricey', 'sleepy', 'flaky', 'squatted', 'slow']) {
    const r = await m.req('POST', '/api/v1/resources', { body: await signedListing(s, { name: `Scan ${name}`, endpoint: `${base}/${name}`, price: '0.02' }) });
    expect(r.status).toBe(201);
    const rec = r.json as ListingRecord;
    ids[name] = rec.resource_id;
    seen[name] = [rec];
  }
}, 60_000);

afterAll(() => stopScanSuite({ rt, m, server, backend }));

async function read(name: string): Promise<ListingRecord> {
  const r = await m.req('GET', `/api/v1/resources/${ids[name]}`);
  const rec = r.json as ListingRecord;
  seen[name]!.push(rec);
  return rec;
}
const until = (name: string, ok: (rec: ListingRecord) => boolean, what: string) =>
  waitFor(async () => {
    const rec = await read(name);
    return ok(rec) && rec;
  }, 20_000, `${name}: ${what}`);

describe('scanner (DESIGN §5 "Scanner")', () => {
  it('a stock @x402/express seller and a v1 seller are verified, fast and scored; insufficient_data until five observations', async () => {
    for (const name of ['good', 'v1']) {
      const rec = await until(name, (r) => r.uptime_observations >= 6, 'six observations');
      expect(rec.status).toBe('verified');
      expect(rec.uptime_30d).toBe(1);
      expect(rec.latency_p50_ms).toBeGreaterThanOrEqual(0);
      // Fast enough to earn latency credit; how much is the machine's load, not the seller's (score.test.ts has the rule).
      expect(rec.latency_p50_ms).toBeLessThan(LATENCY_BAD_MS);
      expect(rec.score_breakdown?.availability).toBe(50);
      expect(rec.score_breakdown?.conformance).toBe(20);
      expect(rec.x402_score).toBeGreaterThanOrEqual(90);
      expect(rec.score_label).toBe('excellent');
      expect(rec.recent_scans[0]).toMatchObject({ status: 402, outcome: 'ok' });
      expect(rec.last_scan_at).toBe(rec.recent_scans[0]?.at);
      const early = seen[name]!.filter((r) => r.uptime_observations < 5);
      expect(early.length).toBeGreaterThan(0);
      for (const r of early) expect([r.score_label, r.x402_score]).toEqual(['insufficient_data', null]);
    }
  });

  it('a malformed 402, a 200 without payment and a price that does not match are up but never verified', async () => {
    for (const [name, outcome] of [['malformed', 'malformed'], ['free', 'no_payment_required'], ['pricey', 'mismatch']] as const) {
      const rec = await until(name, (r) => r.uptime_observations >= 5, 'five observations');
      expect(rec.status, name).toBe('unverified');
      expect(rec.recent_scans.every((x) => x.outcome === outcome), name).toBe(true);
      expect(rec.uptime_30d).toBe(1);
      expect(rec.score_breakdown?.conformance).toBe(0);
      expect(rec.x402_score).toBeLessThan(75);
    }
  });

  it("an endpoint whose own 402 pays another payTo is shown as such and never quoted (ADR 0071)", async () => {
    const rec = await until('squatted', (r) => r.uptime_observations >= 1, 'a probe');
    expect(rec.status).toBe('unverified');
    expect(rec.recent_scans[0]).toMatchObject({ status: 402, outcome: 'pay_to_mismatch' });
    expect(rec.recent_scans[0]?.detail).toContain(`not to the listing's payTo ${s.evm.address}`);
    // The search index catches up with the probe within a second; refreshed here so the quote reads it now.
    await m.market.index.refresh();
    const q = await m.req('POST', '/api/v1/route/quote', { body: { capability: 'squatted', asset: 'USDC' } });
    expect({ status: q.status, code: (q.json as { error?: { code?: string } }).error?.code }).toEqual({ status: 404, code: 'no_matching_resource' });
  });

  it('a seller that never answers times out and is offline, with no latency', async () => {
    const rec = await until('sleepy', (r) => r.uptime_observations >= 5, 'five observations');
    expect(rec.status).toBe('offline');
    expect(rec.recent_scans[0]).toMatchObject({ outcome: 'timeout', status: null, latency_ms: null });
    expect(rec).toMatchObject({ uptime_30d: 0, latency_p50_ms: null, score_label: 'poor' });
  });

  it('a seller that goes down for a while: degraded, offline, then back to verified; uptime follows', async () => {
    await until('flaky', (r) => r.status === 'verified' && r.uptime_observations >= 5, 'verified');
    up = false;
    const off = await until('flaky', (r) => r.status === 'offline', 'offline');
    expect(off.recent_scans.slice(0, 3).map((x) => x.outcome)).toEqual(['unreachable', 'unreachable', 'unreachable']);
    expect(off.uptime_30d).toBeLessThan(1);
    up = true;
    const back = await until('flaky', (r) => r.status === 'verified', 'verified again');
    // The journal has every status the listing went through, however quickly.
    const { rows } = await backend.db.query<{ state_after: string }>(`SELECT state_after FROM actor_events WHERE actor_id = $1 ORDER BY seq`, [ids.flaky!]);
    const statuses = rows.map((r) => r.state_after).filter((st, i, all) => st !== all[i - 1]);
    expect(statuses).toEqual(['unverified', 'verified', 'degraded', 'offline', 'degraded', 'verified']);
    expect(back.uptime_30d).toBeGreaterThan(0);
    expect(back.uptime_30d).toBeLessThan(1);
    expect(back.score_breakdown?.availability).toBeLessThan(50);
  });

  it('scan-now probes at once for an operator and answers with the scan; others are refused', async () => {
    const refused = await m.req('POST', `/api/v1/resources/${ids.good}/scan`);
    expect(refused.status).toBe(401);
    const before = (await read('good')).uptime_observations;
    const r = await m.req('POST', `/api/v1/resources/${ids.good}/scan`, { headers: { authorization: `Bearer ${OPERATOR_TOKEN}` } });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ object: 'scan', resource_id: ids.good, scan: { status: 402, outcome: 'ok' }, listing: { status: 'verified' } });
    expect((r.json as { listing: ListingRecord }).listing.uptime_observations).toBeGreaterThan(before);
    const missing = await m.req('POST', '/api/v1/resources/res_00/scan', { headers: { authorization: `Bearer ${OPERATOR_TOKEN}` } });
    expect(missing.status).toBe(404);
  });

  it('a probe in flight while the owner changes the price never verifies the new price (ADR 0088)', async () => {
    await until('slow', (r) => r.status === 'verified', 'verified at its first price');
    const updated = await m.req('POST', '/api/v1/resources', { body: await signedListing(s, { name: 'Scan slow', endpoint: `${base}/slow`, price: '0.03' }) });
    expect([updated.status, (updated.json as ListingRecord).status]).toEqual([200, 'unverified']);
    // Rounds start every 150 ms and take 500: several read the first price and answer after the update.
    await until('slow', (r) => r.recent_scans[0]?.outcome === 'mismatch', 'a probe of the new price');
    await new Promise((r) => setTimeout(r, SLOW_MS * 3));
    const { rows } = await backend.db.query<{ type: string; state_after: string }>(`SELECT event->>'type' AS type, state_after FROM actor_events WHERE actor_id = $1 ORDER BY seq`, [ids.slow!]);
    const after = rows.slice(rows.findIndex((r) => r.type === 'listing.update'));
    expect(after.length).toBeGreaterThan(1);
    expect(after.filter((r) => r.state_after !== 'unverified')).toEqual([]);
  });

  it('routed executions feed the paid-call success part: a refused payment (402) counts neither way, a served call does (ADR 0088)', async () => {
    const buyer = privateKeyToAccount(generatePrivateKey());
    const client = new x402Client().register('eip155:8453', new ExactEvmClient(buyer));
    const execute = async () => {
      const q = await m.req('POST', '/api/v1/route/quote', { body: { capability: 'good', asset: 'USDC' } });
      expect(q.status).toBe(201);
      const { intent_id, resource } = q.json as { intent_id: string; resource: { resource_id: string } };
      expect(resource.resource_id).toBe(ids.good);
      const r402 = await fetch(`${base}/good`);
      const header = encodePaymentSignatureHeader(await client.createPaymentPayload(decodePaymentRequiredHeader(r402.headers.get('payment-required')!)));
      const fee = await signLeg(buyer, { to: FEE_ADDRESSES.USDC, value: 100n });
      return m.req('POST', '/api/v1/route/execute', { body: { intent_id, fee_payment: { legs: { fee } }, seller_payment: header, body: {} } });
    };
    // Enough for the fee leg, not for the seller's price: the seller's facilitator refuses its leg.
    await m.market.ledger.fund(buyer.address, 150n);
    const refused = await execute();
    expect([refused.status, (refused.json as { status: number }).status, (refused.json as { purchase_status: string }).purchase_status]).toEqual([200, 402, 'SELLER_FAILED']);
    await m.market.ledger.fund(buyer.address, 100_000n);
    const served = await execute();
    // Served: the fee is taken right after the answer is returned (ADR 0046).
    expect((served.json as { purchase_status: string }).purchase_status, JSON.stringify(served.json)).toBe('EXECUTING');
    const paid = async () => (await backend.db.query<{ paid: number[] }>(`SELECT snapshot->'context'->'scan'->'paid' AS paid FROM actors WHERE id = $1`, [ids.good!])).rows[0]?.paid;
    await waitFor(async () => (await paid())?.length === 1, 20_000, 'the served call counted');
    expect(await paid()).toEqual([1]);
    // The listing is told of the served call only: the refused one's record wrote no event for it.
    const told = await backend.db.query<{ actor_id: string }>(`SELECT actor_id FROM outbox WHERE msg_id LIKE 'executed:%' AND actor_id = ANY($1)`, [[refused, served].map((r) => (r.json as { intent_id: string }).intent_id)]);
    expect(told.rows.map((r) => r.actor_id)).toEqual([(served.json as { intent_id: string }).intent_id]);
    expect((await read('good')).score_breakdown?.paid_call_success).toBe(10);
  }, 60_000);

  it('anmpay market scan <id> probes now and prints the result (--json, -q, text)', async () => {
    const env = { ANMPAY_MARKET_URL: m.url, ANMPAY_OPERATOR_TOKEN: OPERATOR_TOKEN };
    const doc = await cliJson(['market', 'scan', ids.malformed!], env);
    expect(doc).toMatchObject({ resource_id: ids.malformed, scan: { outcome: 'malformed', status: 402 }, listing: { status: 'unverified' } });
    const quiet = await runCli(['market', 'scan', ids.sleepy!, '-q'], env);
    expect([quiet.code, quiet.stdout.trim()]).toEqual([0, 'timeout']);
    const text = await runCli(['market', 'scan', ids.good!], env);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(new RegExp(`^${ids.good}: ok \\(HTTP 402, \\d+ ms\\)\n  status (verified|degraded); score \\d+ \\((excellent|good)\\); uptime [\\d.]+ % over \\d+ probes`));
  }, 120_000);
});
