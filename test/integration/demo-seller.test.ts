/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-call, @typescript-eslint/no-unsafe-return --
   assertions read the CLI's and the marketplace's JSON. */
/**
 * DESIGN §6: the first start registers a demo seller, "an x402 paid endpoint served by the
 * project itself (v2 headers, priced in both lanes) listed in the marketplace, so discovery,
 * quote, purchase and routed execution work out of the box" (issue 21 item 3: and a second
 * endpoint speaking x402 v1). The whole service on the embedded defaults (PGlite, in-process
 * bus and devnet): after the first start both listings are discoverable, `anmpay market
 * execute` buys a call of each through the marketplace and gets the seller's answer with the
 * fee settled, and a restart on the same data directory lists nothing twice.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startServices, type Services } from '../../bin/services.ts';
import type { Config } from '../../runtime/config.ts';
import { QUOTES } from '../../gateway/demo-seller/quotes.ts';
import { x402Client } from '@x402/core/client';
import { decodePaymentResponseHeader } from '@x402/core/http';
import { wrapFetchWithPayment } from '@x402/fetch';
import { AnmRpcClient } from '../../runtime/chain/rpc-client.ts';
import { ExactAnmScheme } from '../../runtime/market/client/exact-anm.ts';
import { anmBuyer, ANM } from '../fixtures/market-anm.ts';
import { inProcessConfig } from '../helpers/service-config.ts';
import { cliJson } from '../helpers/cli.ts';
import { waitFor } from '../helpers/backends.ts';
import { freePort } from '../helpers/free-port.ts';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

let dataDir: string;
let config: Config;
let services: Services | undefined;
let banner = '';

async function start(): Promise<Services> {
  const writes: string[] = [];
  const spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => (writes.push(String(chunk)), true));
  try {
    return await startServices(config);
  } finally {
    spy.mockRestore();
    banner = writes.join('');
  }
}

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(tmpdir(), 'anmpay-demo-seller-'));
  config = inProcessConfig(dataDir, `opt_${randomBytes(16).toString('hex')}`, { ANMPAY_DEMO_SELLER: '1', DEMO_SELLER_PORT: String(await freePort()) });
  services = await start();
}, 180_000);

afterAll(async () => {
  await services?.stop();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

const svc = (): Services => services!;
const market = (p: string): Promise<Json> => fetch(`${svc().marketplace!.url}${p}`).then((r) => r.json() as Promise<Json>);
const cli = (args: string[]): Promise<Json> => cliJson<Json>(args, { ANMPAY_MARKET_URL: svc().marketplace!.url, ANMPAY_DATA_DIR: dataDir });
const ledger = () => svc().marketplace!.market.ledger;
const feeAddress = () => svc().marketplace!.market.feeAddresses.USDC;

describe('the demo seller on the embedded defaults', () => {
  it('is listed after the first start: the v2 echo on both lanes, the v1 quote on USDC; the banner says where', async () => {
    const seller = svc().demoSeller!;
    expect(seller.url).toBe(`http://127.0.0.1:${config.DEMO_SELLER_PORT}`);
    const echo = (await market('/api/v1/search?capability=echo')).data;
    expect(echo).toHaveLength(1);
    expect(echo[0]).toMatchObject({ endpoint: `${seller.url}/echo`, method: 'POST', category: 'demo', pricing: { asset: 'USDC', seller_price: '0.010000' }, status: 'unverified' });
    expect(echo[0].accepted_assets.map((a: Json) => [a.asset, a.network, a.seller_price])).toEqual([
      ['USDC', 'eip155:8453', '0.010000'],
      ['ANM', 'native:1', '0.010000000'],
    ]);
    const quote = (await market('/api/v1/search?capability=quote')).data;
    expect(quote).toHaveLength(1);
    expect(quote[0]).toMatchObject({ endpoint: `${seller.url}/v1/quote-of-the-day`, method: 'GET', pricing: { asset: 'USDC', seller_price: '0.020000' } });
    expect(quote[0].accepted_assets).toHaveLength(1);
    expect(banner).toContain('Demo seller');
    expect(banner).toContain(`POST ${seller.url}/echo`);
    expect(banner).toContain(`GET  ${seller.url}/v1/quote-of-the-day`);
    expect(banner).toContain(`export ANMPAY_MARKET_URL=${svc().marketplace!.url}`);
  });

  it('the scanner reaches the demo seller as routed execution does: each probe sees its 402 and the listing is verified', async () => {
    for (const l of (await market('/api/v1/resources')).data as Json[]) {
      const res = await fetch(`${svc().marketplace!.url}/api/v1/resources/${l.resource_id}/scan`, { method: 'POST', headers: { authorization: `Bearer ${config.ANMPAY_OPERATOR_TOKEN}` } });
      const scanned = (await res.json()) as Json;
      // Before the fix the scanner had no demo-origin allowance: "127.0.0.1 is a loopback address", refused.
      expect(scanned.scan).toMatchObject({ outcome: 'ok', status: 402 });
      expect(scanned.listing.status).toBe('verified');
    }
  });

  it('`anmpay market execute` buys a call of each endpoint through the marketplace: the seller answers, both legs settle', { timeout: 120_000 }, async () => {
    const key = path.join(dataDir, 'buyer.json');
    const buyer = (await cli(['usdc', 'create', '--out', key])).address as string;
    await ledger().fund(buyer, 1_000_000n);
    const [echoListing] = (await market('/api/v1/search?capability=echo')).data;
    const payee = echoListing.accepted_assets[0].pay_to as string;
    const fee0 = await ledger().balanceOf(feeAddress());
    const seller0 = await ledger().balanceOf(payee);

    const v2 = await cli(['market', 'execute', 'echo', '--body', '{"text":"hello"}', '--key', key]);
    // The fee is taken right after each answer is returned (ADR 0046).
    expect(v2).toMatchObject({ status: 200, purchase_status: 'EXECUTING', body: '{"echo":{"text":"hello"}}', body_encoding: 'utf8' });
    expect(v2.headers['payment-response']).toBeTruthy();

    const v1 = await cli(['market', 'execute', 'quote', '--key', key]);
    expect(v1).toMatchObject({ status: 200, purchase_status: 'EXECUTING', body_encoding: 'utf8' });
    expect(v1.headers['x-payment-response']).toBeTruthy();
    const answer = JSON.parse(v1.body as string) as { quote: string; author: string; day: string };
    expect(QUOTES).toContainEqual({ quote: answer.quote, author: answer.author });

    // Seller legs 0.01 + 0.02 USDC to the demo seller, fees 50 + 100 atomic to the marketplace.
    expect((await ledger().balanceOf(payee)) - seller0).toBe(30_000n);
    await waitFor(async () => (await ledger().balanceOf(feeAddress())) - fee0 === 150n, 10_000, 'both fees settled');
    expect(await ledger().balanceOf(buyer)).toBe(1_000_000n - 30_150n);
  });

  it('the v2 echo takes ANM too: a stock x402 fetch client paying exact-anm on native:1 gets the answer, settled on the chain', { timeout: 90_000 }, async () => {
    const live = new AnmRpcClient(`${svc().devnet!.url}/live`);
    // Blocks on their own while the seller's facilitator waits for the transfer's receipt.
    await live.setAutomine(100);
    try {
      const buyer = await anmBuyer(live, ANM);
      const [listing] = (await market('/api/v1/search?capability=echo')).data;
      const payee = listing.accepted_assets.find((a: Json) => a.asset === 'ANM').pay_to as string;
      const before = await live.getBalance(payee);
      const pay = wrapFetchWithPayment(fetch, new x402Client().register('native:1', new ExactAnmScheme(buyer.wallet)));
      const res = await pay(`${svc().demoSeller!.url}/echo`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"lane":"ANM"}' });
      expect(res.status).toBe(200);
      expect(await res.text()).toBe('{"echo":{"lane":"ANM"}}');
      const receipt = decodePaymentResponseHeader(res.headers.get('payment-response')!);
      expect(receipt).toMatchObject({ success: true, network: 'native:1', payer: buyer.keys.address });
      expect((await live.getTransactionReceipt(receipt.transaction))?.status).toBe('success');
      expect((await live.getBalance(payee)) - before).toBe(10_000_000n);
    } finally {
      await live.setAutomine(0);
    }
  });

  it('a restart on the same data directory lists nothing twice and prints no banner', { timeout: 180_000 }, async () => {
    const before = (await market('/api/v1/resources')).data as Json[];
    expect(before).toHaveLength(2);
    await services!.stop();
    services = undefined;
    services = await start();
    expect(banner).not.toContain('Demo seller');
    const after = (await market('/api/v1/resources')).data as Json[];
    expect(after.map((l) => [l.resource_id, l.provider_id, l.endpoint])).toEqual(before.map((l) => [l.resource_id, l.provider_id, l.endpoint]));
    expect(svc().demoSeller!.listings.map((l) => l.resource_id).sort()).toEqual(before.map((l) => l.resource_id).sort());
    // The purchase counts kept: the re-registration changed nothing.
    expect(after.map((l) => l.analytics.transactions)).toEqual(before.map((l) => l.analytics.transactions));
  });
});
