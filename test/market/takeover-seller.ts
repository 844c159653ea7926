/**
 * The seller of the takeover-limit suites: it counts the requests each endpoint gets and
 * answers each after 300 ms, so copies sent at once arrive while the first probe is in flight
 * or just after; a test that needs them to arrive while it is in flight, however slow the
 * machine, holds an endpoint's answers on a promise in `holds`. Its 402 pays whoever `payees`
 * names for that endpoint; without an entry it answers 404.
 */
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import express from 'express';
import { expect } from 'vitest';
import type { ListingRecord } from '../../machines/listing/view.ts';
import { USDC_TOKEN } from '../../machines/money/market.ts';
import { seller, signedListing } from '../fixtures/market.ts';
import type { ScanMarket } from './scanner-harness.ts';

export interface TakeoverSeller {
  server: Server;
  base: string;
  /** Requests each endpoint got. */
  hits: Record<string, number>;
  /** Whom each endpoint's 402 pays. */
  payees: Record<string, string[]>;
  /** An endpoint answers only once its promise here has settled (then after the usual 300 ms). */
  holds: Record<string, Promise<void>>;
}

export async function startTakeoverSeller(): Promise<TakeoverSeller> {
  const hits: Record<string, number> = {};
  const payees: Record<string, string[]> = {};
  const holds: Record<string, Promise<void>> = {};
  let base = '';
  const app = express();
  app.get('/:name', (req, res) => {
    const name = req.params.name;
    hits[name] = (hits[name] ?? 0) + 1;
    void (holds[name] ?? Promise.resolve()).then(() => setTimeout(() => {
      const to = payees[name];
      if (!to) return void res.status(404).send('no such thing');
      res.status(402).json({
        x402Version: 1,
        error: 'X-PAYMENT header is required',
        accepts: to.map((payTo) => ({
          scheme: 'exact', network: 'base', maxAmountRequired: '20000', resource: `${base}${req.path}`, description: 'tides',
          mimeType: 'application/json', payTo, maxTimeoutSeconds: 60, asset: USDC_TOKEN.address, extra: { name: USDC_TOKEN.name, version: USDC_TOKEN.version },
        })),
      });
    }, 300));
  });
  const server = app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { server, base, hits, payees, holds };
}

/** A squatter's listing of `path`, once the scanner's first probe of it is recorded (that request is the scanner's). */
export async function squattedListing(m: ScanMarket, base: string, path: string): Promise<ListingRecord> {
  const read = async (id: string) => (await m.req('GET', `/api/v1/resources/${id}`)).json as ListingRecord;
  const res = await m.req('POST', '/api/v1/resources', { body: await signedListing(seller(), { name: `Tide table ${path}`, endpoint: `${base}/${path}`, price: '0.02' }) });
  expect(res.status).toBe(201);
  const id = (res.json as ListingRecord).resource_id;
  for (let i = 0; i < 100 && (await read(id)).recent_scans.length === 0; i++) await new Promise((r) => setTimeout(r, 50));
  expect((await read(id)).recent_scans).toHaveLength(1);
  return read(id);
}
