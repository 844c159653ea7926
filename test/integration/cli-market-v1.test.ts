/**
 * `anmpay market buy` against a stock x402 v1 seller (`x402-express` 1.x) through the real
 * binary: it names the header the seller's version uses and `-q` prints that header's value
 * (DESIGN §5 "Purchase": "the header name for the seller's x402 version"; ADR 0080).
 */
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import express from 'express';
import { paymentMiddleware } from 'x402-express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.ts';
import { seller, signedListing } from '../fixtures/market.ts';
import { useMarket } from '../market/harness.ts';

const h = useMarket({ faucet: true, forward: { allowPrivate: true } });
const tag = `aphorism${randomBytes(4).toString('hex')}`;
const ANSWER = '{"quote":"Less is more."}';
let dir: string;
let server: Server;
let endpoint: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'anm-cli-market-v1-'));
  const s = seller();
  const app = express();
  app.use(paymentMiddleware(s.evm.address, { 'GET /quote': { price: '$0.02', network: 'base', config: { description: 'quote', mimeType: 'application/json', maxTimeoutSeconds: 300 } } }, { url: `${h.url}/facilitator` as `${string}://${string}` }));
  app.get('/quote', (_req, res) => {
    res.type('application/json').send(ANSWER);
  });
  server = app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}/quote`;
  const listed = await h.req('POST', '/api/v1/resources', { body: await signedListing(s, { name: 'Aphorisms', tags: [tag], endpoint, price: '0.02' }) });
  expect(listed.status).toBe(201);
  const id = (listed.json as { resource_id: string }).resource_id;
  expect((await h.market.scanner.scanNow(id))?.scan.outcome).toBe('ok');
  await h.deps.index.refresh();
}, 60_000);

afterAll(async () => {
  await new Promise((r) => server?.close(r));
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('anmpay market buy for an x402 v1 seller', () => {
  it('prints the X-PAYMENT header; -q prints its value, which the stock v1 seller accepts', { timeout: 90_000 }, async () => {
    const env = { ANMPAY_MARKET_URL: h.url, ANMPAY_DATA_DIR: dir };
    const key = path.join(dir, 'buyer.json');
    const created = await runCli(['usdc', 'create', '--out', key, '-q'], env);
    expect(created.code, created.stderr).toBe(0);
    expect((await runCli(['usdc', 'fund', created.stdout.trim(), '1'], env)).code).toBe(0);
    const text = await runCli(['market', 'buy', tag, '--key', key], env);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/call the seller \(x402 v1\) with the header:\n {2}X-PAYMENT: [A-Za-z0-9+/]+=*\n/);
    expect(text.stdout).not.toContain('PAYMENT-SIGNATURE');
    const q = await runCli(['market', 'buy', tag, '--key', key, '-q'], env);
    expect(q.code, q.stderr).toBe(0);
    const call = await fetch(endpoint, { headers: { 'X-PAYMENT': q.stdout.trim() } });
    expect(call.status).toBe(200);
    expect(await call.text()).toBe(ANSWER);
  });
});
