/* eslint-disable @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-member-access --
   assertions read parsed JSON response bodies. */
/**
 * The facilitator on the viem USDC lane with the real x402 packages, unchanged (DESIGN §5
 * "Facilitator"; ADR 0025): a stock `@x402/express` seller priced in the chain's test token
 * verifies and settles through the marketplace, a buyer pays with `@x402/fetch` and
 * `@x402/evm`'s ExactEvmScheme, and the transfer happens on the local EVM node.
 */
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import express from 'express';
import { HTTPFacilitatorClient } from '@x402/core/server';
import { ExactEvmScheme as ExactEvmClient } from '@x402/evm';
import { ExactEvmScheme as ExactEvmServer } from '@x402/evm/exact/server';
import { paymentMiddleware, x402ResourceServer } from '@x402/express';
import { wrapFetchWithPaymentFromConfig } from '@x402/fetch';
import type { Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useEvmLane } from './evm-lane.ts';
import { useMarket } from './harness.ts';

const lane = useEvmLane();
const h = useMarket({ usdcLedger: () => lane.ledger });
const buyer = privateKeyToAccount(generatePrivateKey());
const sellerAddress = privateKeyToAccount(generatePrivateKey()).address;
let sellerServer: Server;
let sellerUrl: string;

beforeAll(async () => {
  const resourceServer = new x402ResourceServer(new HTTPFacilitatorClient({ url: `${h.url}/facilitator` })).register('eip155:8453', new ExactEvmServer());
  const price = { amount: '20000', asset: lane.token.address, extra: { name: lane.token.name, version: lane.token.version } };
  const app = express();
  app.use(paymentMiddleware({ 'GET /weather': { accepts: { scheme: 'exact', price, network: 'eip155:8453', payTo: sellerAddress }, description: 'Weather' } }, resourceServer));
  app.get('/weather', (_req, res) => {
    res.json({ forecast: 'sunny' });
  });
  sellerServer = app.listen(0, '127.0.0.1');
  await new Promise((r) => sellerServer.once('listening', r));
  sellerUrl = `http://127.0.0.1:${(sellerServer.address() as AddressInfo).port}`;
  await lane.deployed.mint(buyer.address, 100_000n);
}, 60_000);

afterAll(async () => {
  await new Promise((r) => sellerServer?.close(r));
});

const pay = () =>
  wrapFetchWithPaymentFromConfig(fetch, {
    schemes: [{ network: 'eip155:8453', client: new ExactEvmClient(buyer) }],
    spendControls: { allowedAssets: [{ network: 'eip155:8453', asset: lane.token.address, maxAmountPerPayment: '20000' }] },
  });

describe('a stock @x402/express seller settles through the facilitator on a real chain', () => {
  it('@x402/fetch pays; the facilitator verifies and settles exact on chain; the seller is paid in the token', async () => {
    const res = await pay()(`${sellerUrl}/weather`, { method: 'GET' });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ forecast: 'sunny' });
    const settled = JSON.parse(Buffer.from(res.headers.get('payment-response') ?? '', 'base64').toString());
    expect(settled).toMatchObject({ success: true, network: 'eip155:8453' });
    const receipt = await lane.client.getTransactionReceipt({ hash: settled.transaction as Hex });
    expect(receipt.status).toBe('success');
    expect(await lane.balance(sellerAddress)).toBe(20_000n);
    expect(await lane.balance(buyer.address)).toBe(80_000n);
  });

  it('a replayed payment header is refused by the seller (the facilitator reports the nonce used); nothing moves', async () => {
    let header = '';
    const capture: typeof fetch = async (input, init) => {
      const headers = input instanceof Request ? input.headers : new Headers(init?.headers);
      header = headers.get('payment-signature') ?? header;
      return fetch(input, init);
    };
    const paying = wrapFetchWithPaymentFromConfig(capture, {
      schemes: [{ network: 'eip155:8453', client: new ExactEvmClient(buyer) }],
      spendControls: { allowedAssets: [{ network: 'eip155:8453', asset: lane.token.address, maxAmountPerPayment: '20000' }] },
    });
    expect((await paying(`${sellerUrl}/weather`, { method: 'GET' })).status).toBe(200);
    expect(header).not.toBe('');
    const before = await lane.balance(buyer.address);
    const replay = await fetch(`${sellerUrl}/weather`, { headers: { 'PAYMENT-SIGNATURE': header } });
    expect(replay.status).toBe(402);
    expect(await lane.balance(buyer.address)).toBe(before);
    const verify = await h.req('POST', '/facilitator/verify', {
      body: { x402Version: 2, paymentPayload: JSON.parse(Buffer.from(header, 'base64').toString()), paymentRequirements: JSON.parse(Buffer.from(header, 'base64').toString()).accepted },
    });
    expect(verify.json).toMatchObject({ isValid: false, invalidReason: 'invalid_exact_evm_nonce_already_used' });
  });
});
