/**
 * Two runtime processes' worth of engine (consumer, timer sweeper, scanner), each with its own
 * database pool and bus connection on the real backends, share the listings' probe rounds and
 * never probe one round twice (DESIGN §5 "Scanner": the timer row's claim is the lock). The
 * seller counts every request it gets; each must be one recorded observation.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openEmbedded, openReal, realAvailable, waitFor, type Backend } from '../helpers/backends.ts';
import { seller, signedListing } from '../fixtures/market.ts';
import { secondConnections, startScanMarket, startScanRuntime, type ScanMarket, type ScanRuntime } from './scanner-harness.ts';

const LISTINGS = 25;
const ROUNDS = 6;
let backend: Backend;
let second: Awaited<ReturnType<typeof secondConnections>>;
let a: ScanRuntime;
let b: ScanRuntime;
let m: ScanMarket;
let server: http.Server;
const hits = new Map<string, number>();

beforeAll(async () => {
  backend = realAvailable ? await openReal() : await openEmbedded();
  second = await secondConnections(backend);
  server = http.createServer((req, res) => {
    hits.set(req.url ?? '', (hits.get(req.url ?? '') ?? 0) + 1);
    res.writeHead(402, { 'content-type': 'application/json' }).end('{"x402Version":1,"error":"payment required","accepts":[]}');
  });
  server.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  a = await startScanRuntime(backend.db, backend.bus);
  b = await startScanRuntime(second.db, second.bus);
  a.scanner.recordRounds();
  b.scanner.recordRounds();
  m = await startScanMarket(a, backend.db);
  const s = seller();
  for (let i = 0; i < LISTINGS; i++) await m.market.listings.register(await signedListing(s, { name: `Round ${i}`, endpoint: `${base}/l${i}`, price: '0.02' }));
}, 60_000);

afterAll(async () => {
  await a?.stop();
  await b?.stop();
  await m?.close();
  server?.closeAllConnections();
  await new Promise((r) => server?.close(r));
  await second?.close();
  await backend?.close();
});

async function observations(): Promise<Map<string, number>> {
  const page = await m.market.listings.page(100);
  return new Map(page.records.map((r) => [new URL(r.endpoint).pathname, r.uptime_observations]));
}

describe('scanner rounds across two runtimes', () => {
  it('every round is probed once: the seller sees exactly the recorded observations, and no round id twice', async () => {
    await waitFor(async () => [...(await observations()).values()].every((n) => n >= ROUNDS), 30_000, `${ROUNDS} rounds of every listing`);
    // Stop taking rounds, let probes in flight be recorded, then compare.
    await a.stop();
    await b.stop();
    const obs = await observations();
    expect(obs.size).toBe(LISTINGS);
    for (const [path, n] of obs) expect(hits.get(path), path).toBe(n);
    const rounds = [...a.scanner.probed, ...b.scanner.probed];
    expect(new Set(rounds).size).toBe(rounds.length);
    expect(rounds.length).toBe([...obs.values()].reduce((x, y) => x + y, 0));
    // Both processes took part: the rounds are shared, not held by one.
    expect(a.scanner.probed.length).toBeGreaterThan(0);
    expect(b.scanner.probed.length).toBeGreaterThan(0);
  }, 60_000);
});
