/* eslint-disable @typescript-eslint/no-unsafe-member-access -- assertions read the CLI's JSON output. */
/**
 * `anmpay market execute` through the real binary (a child process): quote, the seller's
 * header built from a stock `@x402/express` seller's 402 with the stock `@x402/evm` client,
 * the fee leg signed, and the marketplace's routed execution (DESIGN §5 "Routed execution").
 * The CLI signs only an offer that pays the quote's seller leg (ADR 0087), and a seller that
 * answers an error is a failed command.
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
/** Requests that reached each seller route carrying a payment header. */
const paidCalls: Record<string, number> = {};

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'anm-cli-execute-'));
  const rs = new x402ResourceServer(new HTTPFacilitatorClient({ url: `${h.url}/facilitator` })).register('eip155:8453', new ExactEvmServer());
  const app = express();
  app.use(express.json());
  app.use((req, _res, next) => {
    if (req.headers['payment-signature']) paidCalls[req.path] = (paidCalls[req.path] ?? 0) + 1;
    next();
  });
  const accepts = (price: string) => ({ accepts: { scheme: 'exact', price, network: 'eip155:8453', payTo: s.evm.address }, description: 'x' }) as const;
  // /greedy is listed at 0.01 USDC and its 402 asks 0.9 USDC.
  app.use(paymentMiddleware({ 'POST /translate': accepts('$0.02'), 'POST /greedy': accepts('$0.9'), 'POST /broken': accepts('$0.02'), 'POST /premium': accepts('$2.5') }, rs));
  app.post('/translate', (req, res) => {
    res.json({ text: String((req.body as { text?: string }).text ?? '').toUpperCase() });
  });
  app.post('/greedy', (_req, res) => res.json({ got: 'more' }));
  app.post('/broken', (_req, res) => res.status(500).json({ error: 'oracle down' }));
  app.post('/premium', (_req, res) => res.json({ report: 'long' }));
  server = app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  for (const [name, tag, p, price] of [['Shouting translator', 'translator', '/translate', '0.02'], ['Greedy oracle', 'greedy', '/greedy', '0.01'], ['Broken oracle', 'broken', '/broken', '0.02'], ['Premium report', 'premium', '/premium', '2.5']] as const) {
    const listed = await h.req('POST', '/api/v1/resources', { body: await signedListing(s, { name, tags: [tag], endpoint: `${base}${p}`, method: 'POST', price }) });
    expect(listed.status).toBe(201);
  }
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

  it('a seller price above the stock client\'s own $1 default cap is paid as quoted: the buyer\'s ceiling is --max-price, not the SDK\'s', { timeout: 90_000 }, async () => {
    const key = path.join(dir, 'premium-buyer.json');
    const buyer = (await cliJson<{ address: string }>(['usdc', 'create', '--out', key], env())).address;
    await h.market.ledger.fund(buyer, 3_000_000n);
    const r = await cliJson<Record<string, any>>(['market', 'execute', 'premium', '--max-price', '2.6', '--key', key], env()); // eslint-disable-line @typescript-eslint/no-explicit-any
    expect(r).toMatchObject({ status: 200, body: '{"report":"long"}' });
    await waitFor(async () => (await h.market.purchases.read(r.intent_id as string))?.status === 'SETTLED', 10_000, 'the fee settled');
    // 2.5 USDC to the seller, 50 bps of it (12,500 atomic) to the marketplace.
    expect(await h.market.ledger.balanceOf(buyer)).toBe(3_000_000n - 2_512_500n);
  });

  it('marketplace.md:24 "the max_price ceiling … is the TOTAL the buyer pays": a seller listed at 0.01 whose 402 asks 0.9 → exit 1 naming both amounts; nothing signed, sent or settled', { timeout: 90_000 }, async () => {
    const key = path.join(dir, 'greedy-buyer.json');
    const buyer = (await cliJson<{ address: string }>(['usdc', 'create', '--out', key], env())).address;
    await h.market.ledger.fund(buyer, 1_000_000n);
    const [fee0, seller0] = [await h.market.ledger.balanceOf(FEE_ADDRESSES.USDC), await h.market.ledger.balanceOf(s.evm.address)];
    const r = await runCli(['market', 'execute', 'greedy', '--max-price', '0.05', '--key', key], env());
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^error \(seller_price_mismatch\): the seller's 402 asks 900000 \(0\.900000 USDC\) to 0x[0-9a-fA-F]{40} on eip155:8453, but the quote's seller leg is 10000 \(0\.010000 USDC\) to 0x[0-9a-fA-F]{40} on eip155:8453: nothing signed\n$/);
    expect(r.stdout).toBe('');
    expect(paidCalls['/greedy'] ?? 0).toBe(0);
    // The quote was made and left as it is: no execution recorded, no leg bound.
    const states = await h.backend.db.query<{ state: string }>(`SELECT state FROM actors WHERE kind = 'purchase' AND snapshot->'context'->'seller'->>'amount' = '10000'`);
    expect(states.rows.map((x) => x.state)).toEqual(['QUOTED']);
    expect(await h.market.ledger.balanceOf(buyer)).toBe(1_000_000n);
    expect(await h.market.ledger.balanceOf(FEE_ADDRESSES.USDC)).toBe(fee0);
    expect(await h.market.ledger.balanceOf(s.evm.address)).toBe(seller0);
  });

  it('DESIGN §5 "otherwise SELLER_FAILED, fee never taken": a seller answering 500 → exit 1, its answer printed (-q: the body on stdout, the failure on stderr)', { timeout: 90_000 }, async () => {
    const key = path.join(dir, 'broken-buyer.json');
    const buyer = (await cliJson<{ address: string }>(['usdc', 'create', '--out', key], env())).address;
    await h.market.ledger.fund(buyer, 1_000_000n);
    const fee0 = await h.market.ledger.balanceOf(FEE_ADDRESSES.USDC);
    const text = await runCli(['market', 'execute', 'broken', '--key', key], env());
    expect(text.code).toBe(1);
    expect(text.stdout).toContain('seller answered 500');
    expect(text.stdout).toContain('purchase SELLER_FAILED');
    expect(text.stdout).toContain('{"error":"oracle down"}');
    expect(text.stderr).toBe('error (seller_failed): the seller answered 500; purchase SELLER_FAILED, no fee taken\n');
    const q = await runCli(['market', 'execute', 'broken', '--key', key, '-q'], env());
    expect([q.code, q.stdout, q.stderr]).toEqual([1, '{"error":"oracle down"}\n', 'error (seller_failed): the seller answered 500; purchase SELLER_FAILED, no fee taken\n']);
    const json = await runCli(['market', 'execute', 'broken', '--key', key, '--json'], env());
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout)).toMatchObject({ status: 500, purchase_status: 'SELLER_FAILED', body: '{"error":"oracle down"}' });
    // --json: "errors as {"error":{"code","message"}}" (anmpay --help), here on stderr, stdout holding the answer.
    expect(JSON.parse(json.stderr)).toEqual({ error: { code: 'seller_failed', message: 'the seller answered 500; purchase SELLER_FAILED, no fee taken' } });
    expect(paidCalls['/broken']).toBe(3);
    expect(await h.market.ledger.balanceOf(FEE_ADDRESSES.USDC)).toBe(fee0);
  });
});
