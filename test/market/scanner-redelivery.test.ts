/**
 * A round that reaches two runtime processes is probed once (DESIGN §5 "Scanner": "several
 * runtime processes never probe the same listing twice in one round"). NATS gives a message
 * to another process when its ack is late (NATS_ACK_WAIT_MS), so the same `listing.probe_due`
 * can be applied by two processes at once, or again later: only the process whose apply
 * committed probes. Two engines, each with its own pool and bus connection on the real
 * backends; rounds an hour apart, so the only round is the one the test delivers.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodePaymentRequiredHeader } from '@x402/core/http';
import type { ListingContext } from '../../machines/listing/context.ts';
import type { ListingEvent } from '../../machines/listing/events.ts';
import { USDC_TOKEN } from '../../machines/money/market.ts';
import { resourceIdOf } from '../../runtime/market/listing-signature.ts';
import { openEmbedded, openReal, realAvailable, type Backend } from '../helpers/backends.ts';
import { secondConnections, startScanRuntime, type ScanRuntime } from './scanner-harness.ts';

const HOUR = 3_600_000;
const PAY_TO = '0x00000000000000000000000000000000000b0b01';
let backend: Backend;
let second: Awaited<ReturnType<typeof secondConnections>>;
let a: ScanRuntime;
let b: ScanRuntime;
let server: http.Server;
let base: string;
const hits = new Map<string, number>();

beforeAll(async () => {
  backend = realAvailable ? await openReal() : await openEmbedded();
  second = await secondConnections(backend);
  const required = encodePaymentRequiredHeader({
    x402Version: 2,
    resource: { url: 'http://127.0.0.1/r', description: 'r', mimeType: 'application/json' },
    accepts: [{ scheme: 'exact', network: 'eip155:8453', asset: USDC_TOKEN.address, amount: '10000', payTo: PAY_TO, maxTimeoutSeconds: 60, extra: {} }],
  });
  server = http.createServer((req, res) => {
    hits.set(req.url ?? '', (hits.get(req.url ?? '') ?? 0) + 1);
    res.writeHead(402, { 'payment-required': required }).end();
  });
  server.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  a = await startScanRuntime(backend.db, backend.bus, { intervalMs: HOUR });
  b = await startScanRuntime(second.db, second.bus, { intervalMs: HOUR });
}, 60_000);

afterAll(async () => {
  await a?.stop();
  await b?.stop();
  server?.closeAllConnections();
  await new Promise((r) => server?.close(r));
  await second?.close();
  await backend?.close();
});

/** A listing of the seller's `path`, its first round an hour out. */
async function listing(path: string): Promise<string> {
  const endpoint = `${base}${path}`;
  const id = resourceIdOf('GET', endpoint);
  await a.engine.host.apply({ kind: 'listing', id }, {
    type: 'listing.register', id: `reg:${path}`, at: Date.now(), probe_in_ms: HOUR, resource_id: id, provider_id: 'prov_b0b1',
    name: `redelivered ${path}`, description: 'r', category: 'r', tags: [], endpoint, method: 'GET', model: 'per_call',
    assets: [{ asset: 'USDC', pay_to: PAY_TO, seller_price_atomic: '10000' }],
    documentation_url: null, request_schema: null, response_schema: null, example_request: null, example_response: null,
  } satisfies ListingEvent);
  return id;
}

async function observations(id: string): Promise<number> {
  const { rows } = await backend.db.query<{ snapshot: { context: ListingContext } }>(`SELECT snapshot FROM actors WHERE id = $1`, [id]);
  return rows[0]?.snapshot.context.scan?.recent.length ?? 0;
}

describe('one round delivered to two runtime processes', () => {
  it('applied by both at once, and again later: one probe, one observation', async () => {
    const rounds = 5;
    const ids = await Promise.all(Array.from({ length: rounds }, (_, i) => listing(`/r${i}`)));
    const due = (n: number) => ({ type: 'listing.probe_due', id: `tmr:probe:${n}`, at: Date.now(), timer: 'probe', generation: n }) satisfies ListingEvent;
    // Each round's firing reaches both processes together (a redelivery racing the first delivery).
    await Promise.all(ids.flatMap((id) => [a.engine.host.apply({ kind: 'listing', id }, due(1)), b.engine.host.apply({ kind: 'listing', id }, due(1))]));
    await Promise.all([a.scanner.idle(), b.scanner.idle()]);
    // And once more to each after the round was recorded (a redelivery after the ack wait).
    for (const id of ids) {
      await a.engine.host.apply({ kind: 'listing', id }, due(1));
      await b.engine.host.apply({ kind: 'listing', id }, due(1));
    }
    await Promise.all([a.scanner.idle(), b.scanner.idle()]);
    for (const [i, id] of ids.entries()) {
      expect(hits.get(`/r${i}`), `/r${i}`).toBe(1);
      expect(await observations(id), `/r${i}`).toBe(1);
    }
  });
});
