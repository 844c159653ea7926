/**
 * A seller on the stock `@x402/express` middleware (v2, `exact` on `eip155:8453` at $0.02),
 * settling its own leg through the marketplace's facilitator, listed on the marketplace under
 * one tag per route; and the buyer's seller header built from its 402 with the stock
 * `@x402/evm` client. Records every payment header each route received, as received.
 */
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import express, { type RequestHandler } from 'express';
import { HTTPFacilitatorClient } from '@x402/core/server';
import { x402Client } from '@x402/core/client';
import { decodePaymentRequiredHeader, encodePaymentSignatureHeader } from '@x402/core/http';
import { ExactEvmScheme as ExactEvmClient } from '@x402/evm';
import { ExactEvmScheme as ExactEvmServer } from '@x402/evm/exact/server';
import { paymentMiddleware, x402ResourceServer } from '@x402/express';
import type { PrivateKeyAccount } from 'viem/accounts';
import { expect } from 'vitest';
import { seller, signedListing, type Seller } from '../fixtures/market.ts';
import type { MarketHarness } from './harness.ts';

export interface SellerRoute {
  tag: string;
  method: 'GET' | 'POST';
  path: string;
  handler: RequestHandler;
}

export interface StockSeller {
  s: Seller;
  base: string;
  /** Payment headers (`payment-signature`) each path received, in order. */
  seen: Record<string, string[]>;
  /** Every request each path received, paid or not. */
  requests: Record<string, number>;
  /** The request bodies each path received, as bytes. */
  bodies: Record<string, Buffer[]>;
  /** The buyer's header for `path`, from the seller's own 402. */
  header(path: string, method: 'GET' | 'POST'): Promise<string>;
  close(): Promise<void>;
}

export async function startStockSeller(h: MarketHarness, buyer: PrivateKeyAccount, routes: SellerRoute[]): Promise<StockSeller> {
  const s = seller();
  const rs = new x402ResourceServer(new HTTPFacilitatorClient({ url: `${h.url}/facilitator` })).register('eip155:8453', new ExactEvmServer());
  const accepts = { scheme: 'exact', price: '$0.02', network: 'eip155:8453', payTo: s.evm.address } as const;
  const seen: Record<string, string[]> = {};
  const bodies: Record<string, Buffer[]> = {};
  const app = express();
  app.use(express.json({ verify: (req, _res, buf) => void (bodies[(req as express.Request).path] ??= []).push(Buffer.from(buf)) }));
  const requests: Record<string, number> = {};
  app.use((req, _res, next) => {
    requests[req.path] = (requests[req.path] ?? 0) + 1;
    const header = req.headers['payment-signature'];
    if (typeof header === 'string') (seen[req.path] ??= []).push(header);
    next();
  });
  app.use(paymentMiddleware(Object.fromEntries(routes.map((r) => [`${r.method} ${r.path}`, { accepts, description: r.tag }])), rs));
  for (const r of routes) app[r.method === 'GET' ? 'get' : 'post'](r.path, r.handler);
  const server: Server = app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  for (const r of routes) {
    const listed = await h.req('POST', '/api/v1/resources', { body: await signedListing(s, { name: r.tag, tags: [r.tag], description: r.tag, endpoint: `${base}${r.path}`, method: r.method, price: '0.02' }) });
    expect(listed.status, listed.text).toBe(201);
  }
  const client = new x402Client().register('eip155:8453', new ExactEvmClient(buyer));
  return {
    s,
    base,
    seen,
    requests,
    bodies,
    async header(path, method) {
      const r = await fetch(`${base}${path}`, { method, ...(method === 'POST' ? { headers: { 'content-type': 'application/json' }, body: '{}' } : {}) });
      expect(r.status).toBe(402);
      return encodePaymentSignatureHeader(await client.createPaymentPayload(decodePaymentRequiredHeader(r.headers.get('payment-required')!)));
    },
    async close() {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}
