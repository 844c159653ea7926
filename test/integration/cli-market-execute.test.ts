/* eslint-disable @typescript-eslint/no-unsafe-member-access -- assertions read the CLI's JSON output. */
/**
 * `anmpay market execute` through the real binary (a child process): quote, the seller's
 * header built from a stock `@x402/express` seller's 402 with the stock `@x402/evm` client,
 * the fee leg signed, and the marketplace's routed execution (DESIGN §5 "Routed execution").
 */
import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import express from 'express';
import { HTTPFacilitatorClient } from '@x402/core/server';
import { ExactEvmScheme as ExactEvmServer } from '@x402/evm/exact/server';
import { paymentMiddleware, x402ResourceServer } from '@x402/express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seller, signedListing } from '../fixtures/market.ts';
import { waitFor } from '../helpers/backends.ts';
import { cliJson, runCli } from '../helpers/cli.ts';
import { FEE_ADDRESSES, useMarket } from '../market/harness.ts';

const h = useMarket({ faucet: true, forward: { allowPrivate: true } });
let dir: string;
let server: Server;
const s = seller();

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'anm-cli-execute-'));
  const rs = new x402ResourceServer(new HTTPFacilitatorClient({ url: `${h.url}/facilitator` })).register('eip155:8453', new ExactEvmServer());
  const app = express();
  app.use(express.json());
  app.use(paymentMiddleware({ 'POST /translate': { accepts: { scheme: 'exact', price: '$0.02', network: 'eip155:8453', payTo: s.evm.address }, description: 'Translate' } }, rs));
  app.post('/translate', (req, res) => {
    res.json({ text: String((req.body as { text?: string }).text ?? '').toUpperCase() });
  });
  server = app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}/translate`;
  const listed = await h.req('POST', '/api/v1/resources', { body: await signedListing(s, { name: 'Shouting translator', tags: ['translator'], endpoint, method: 'POST', price: '0.02' }) });
  expect(listed.status).toBe(201);
}, 60_000);

afterAll(async () => {
  await new Promise((r) => server?.close(r));
  if (dir) await rm(dir, { recursive: true, force: true });
});

const env = () => ({ ANMPAY_MARKET_URL: h.url, ANMPAY_DATA_DIR: dir });

describe('anmpay market execute', () => {
  it('does the whole buyer flow and prints the seller answer; the fee settles with it', { timeout: 90_000 }, async () => {
    const key = path.join(dir, 'buyer.json');
    const buyer = (await cliJson<{ address: string }>(['usdc', 'create', '--out', key], env())).address;
    await h.market.ledger.fund(buyer, 1_000_000n);
    const fee0 = await h.market.ledger.balanceOf(FEE_ADDRESSES.USDC);
    const r = await cliJson<Record<string, any>>(['market', 'execute', 'translator', '--body', '{"text":"hola"}', '--key', key], env()); // eslint-disable-line @typescript-eslint/no-explicit-any
    expect(r).toMatchObject({ status: 200, purchase_status: 'EXECUTING', body: '{"text":"HOLA"}', body_encoding: 'utf8' });
    expect(r.headers['payment-response']).toBeTruthy();
    // The fee is taken right after the answer is returned (ADR 0046).
    await waitFor(async () => (await h.market.purchases.read(r.intent_id as string))?.status === 'SETTLED', 10_000, 'the fee settled');
    expect((await h.market.ledger.balanceOf(FEE_ADDRESSES.USDC)) - fee0).toBe(100n);
    expect(await h.market.ledger.balanceOf(buyer)).toBe(1_000_000n - 20_100n);
    // -q: the seller's body alone.
    const q = await runCli(['market', 'execute', 'translator', '--body', '{"text":"adios"}', '--key', key, '-q'], env());
    expect([q.code, q.stdout]).toEqual([0, '{"text":"ADIOS"}\n']);
    const bad = await runCli(['market', 'execute', 'translator', '--body', '[1]', '--key', key], env());
    expect(bad.code).toBe(2);
  });
});
