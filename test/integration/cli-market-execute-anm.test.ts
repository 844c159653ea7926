/* eslint-disable @typescript-eslint/no-unsafe-argument, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-return --
   assertions read the CLI's JSON output and parsed response bodies. */
/**
 * `anmpay market execute --asset ANM --wallet <file>` through the real binary: the quote on
 * the ANM lane, the seller's header built from a stock `@x402/express` seller's 402 (with the
 * project's ExactAnmServerScheme) by x402Client and ExactAnmScheme, the fee leg at the next
 * nonce, the marketplace's routed execution; blocks are mined so the seller transfer settles
 * and the marketplace's watch then submits the fee (DESIGN §5 "Routed execution", ADR 0038).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import express from 'express';
import { HTTPFacilitatorClient, x402ResourceServer } from '@x402/core/server';
import { paymentMiddleware } from '@x402/express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExactAnmServerScheme } from '../../runtime/market/server/exact-anm.ts';
import { waitFor } from '../helpers/backends.ts';
import { cliJson, runCli } from '../helpers/cli.ts';
import { seller, signedListing } from '../fixtures/market.ts';
import { ANM } from '../fixtures/market-anm.ts';
import { FEE_ADDRESSES, useMarket } from '../market/harness.ts';

const h = useMarket({ anm: { confirmations: 2 }, forward: { allowPrivate: true } });
const SELLER_PRICE = 250_000_000n; // 0.25 ANM
const FEE = 1_250_000n; // ceil(0.5 % of it)
const s = seller();
let dir: string;
let server: Server;
let paid = 0;
let greedyPaid = 0;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'anm-cli-execute-anm-'));
  const rs = new x402ResourceServer(new HTTPFacilitatorClient({ url: `${h.url}/facilitator` })).register('native:1', new ExactAnmServerScheme());
  const app = express();
  app.use(express.json());
  const accepts = (price: string) => ({ accepts: { scheme: 'exact-anm', price, network: 'native:1', payTo: s.anmAddress }, description: 'x' }) as const;
  // /greedy is listed at 0.25 ANM and its 402 asks 0.9 ANM.
  app.use(paymentMiddleware({ 'POST /echo': accepts('0.25 ANM'), 'POST /greedy': accepts('0.9 ANM') }, rs));
  app.post('/greedy', (_req, res) => {
    greedyPaid += 1;
    res.json({ got: 'more' });
  });
  app.post('/echo', (req, res) => {
    paid += 1;
    res.json({ echo: (req.body as { say?: string }).say ?? null });
  });
  server = app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}/echo`;
  const listed = await h.req('POST', '/api/v1/resources', { body: await signedListing(s, { name: 'Echo parrot', tags: ['parrot'], endpoint, method: 'POST', asset: 'ANM', price: '0.25' }) });
  expect(listed.status).toBe(201);
  const greedy = await h.req('POST', '/api/v1/resources', { body: await signedListing(s, { name: 'Greedy magpie', tags: ['magpie'], endpoint: endpoint.replace(/\/echo$/, '/greedy'), method: 'POST', asset: 'ANM', price: '0.25' }) });
  expect(greedy.status).toBe(201);
  // Blocks every 50 ms: the seller's settle waits for its transfer's receipt, the fee for its depth.
  await h.chain.rpc.setAutomine(50);
}, 60_000);

afterAll(async () => {
  server?.closeAllConnections();
  await new Promise((r) => server?.close(r));
  if (dir) await rm(dir, { recursive: true, force: true });
});

const env = () => ({ ANMPAY_MARKET_URL: h.url, ANMPAY_DATA_DIR: dir, ANMPAY_DEVNET_URL: h.chain.devnet.url });
const status = async (id: string): Promise<string> => (await h.req('GET', `/api/v1/purchases/${id}`)).json.status;
/** The marketplace's watch, run until the purchase leaves EXECUTING. */
const settled = (id: string) =>
  waitFor(async () => {
    await h.market.executions.reconcile();
    return (await status(id)) !== 'EXECUTING';
  }, 20_000, `${id} leaves EXECUTING`);

describe('anmpay market execute on the ANM lane', () => {
  it('pays the seller with exact-anm and the fee at the next nonce; the fee settles after the seller transfer', { timeout: 120_000 }, async () => {
    const wallet = path.join(dir, 'buyer.json');
    const buyer = (await cliJson<{ address: string }>(['wallet', 'create', '--network', 'live', '--out', wallet], env())).address;
    // Unfunded: refused before the seller is called, and the CLI says how to fund the wallet.
    const poor = await runCli(['market', 'execute', 'parrot', '--asset', 'ANM', '--wallet', wallet, '--body', '{"say":"hi"}'], env());
    expect(poor.code).toBe(1);
    expect(poor.stderr).toContain('insufficient_balance');
    expect(poor.stderr).toContain(`anmpay wallet fund ${buyer} <nanm> --network live`);
    expect(paid).toBe(0);
    await h.chain.rpc.faucet(buyer, 10n * ANM);
    const [fee0, seller0, buyer0] = [await h.chain.rpc.getBalance(FEE_ADDRESSES.ANM), await h.chain.rpc.getBalance(s.anmAddress), await h.chain.rpc.getBalance(buyer)];

    const r = await cliJson<Record<string, any>>(['market', 'execute', 'parrot', '--asset', 'ANM', '--wallet', wallet, '--body', '{"say":"hi"}'], env()); // eslint-disable-line @typescript-eslint/no-explicit-any
    expect(r).toMatchObject({ status: 200, body: '{"echo":"hi"}', body_encoding: 'utf8' });
    expect(r.headers['payment-response']).toBeTruthy();
    expect(['EXECUTING', 'SETTLED']).toContain(r.purchase_status);
    await settled(r.intent_id);
    expect(await status(r.intent_id)).toBe('SETTLED');
    expect((await h.chain.rpc.getBalance(FEE_ADDRESSES.ANM)) - fee0).toBe(FEE);
    expect((await h.chain.rpc.getBalance(s.anmAddress)) - seller0).toBe(SELLER_PRICE);
    expect(buyer0 - (await h.chain.rpc.getBalance(buyer))).toBe(SELLER_PRICE + FEE);
    // The seller transfer and the fee were the wallet's two next transactions, in that order.
    const p = (await h.req('GET', `/api/v1/purchases/${r.intent_id}`)).json;
    expect(p.execution).toMatchObject({ seller_status: 200 });
    expect(await h.chain.rpc.getNonce(buyer, 'latest')).toBe(2n);

    // -q: the seller's body alone; a second call from the same wallet goes on from its nonces.
    const q = await runCli(['market', 'execute', 'parrot', '--asset', 'ANM', '--wallet', wallet, '--body', '{"say":"bye"}', '-q'], env());
    expect([q.code, q.stdout, q.stderr]).toEqual([0, '{"echo":"bye"}\n', '']);
    expect(paid).toBe(2);
  });

  it('marketplace.md:24 "the max_price ceiling … is the TOTAL the buyer pays": a seller listed at 0.25 ANM whose 402 asks 0.9 ANM → exit 1 naming both amounts; no transfer signed or sent', { timeout: 60_000 }, async () => {
    const wallet = path.join(dir, 'magpie-buyer.json');
    const buyer = (await cliJson<{ address: string }>(['wallet', 'create', '--network', 'live', '--out', wallet], env())).address;
    await h.chain.rpc.faucet(buyer, 10n * ANM);
    const balance0 = await h.chain.rpc.getBalance(buyer);
    const r = await runCli(['market', 'execute', 'magpie', '--asset', 'ANM', '--wallet', wallet, '--max-price', '1'], env());
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`error (seller_price_mismatch): the seller's 402 asks 900000000 (0.900000000 ANM) to ${s.anmAddress} on native:1, but the quote's seller leg is 250000000 (0.250000000 ANM) to ${s.anmAddress} on native:1: nothing signed`);
    expect(greedyPaid).toBe(0);
    expect((await h.chain.rpc.pendingTransactions()).length).toBe(0);
    expect(await h.chain.rpc.getNonce(buyer, 'latest')).toBe(0n);
    expect(await h.chain.rpc.getBalance(buyer)).toBe(balance0);
  });

  it('usage: ANM without --wallet exits 2 with the usage line; an unknown asset too', { timeout: 60_000 }, async () => {
    const noWallet = await runCli(['market', 'execute', 'parrot', '--asset', 'ANM'], env());
    expect([noWallet.code, noWallet.stderr]).toEqual([2, expect.stringContaining('--wallet <file> is required with ANM')]);
    expect(noWallet.stderr).toContain('usage: anmpay market execute <capability>');
    expect((await runCli(['market', 'execute', 'parrot', '--asset', 'EUR', '--wallet', 'x.json'], env())).code).toBe(2);
  });
});
