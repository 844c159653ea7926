/* eslint-disable @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-member-access --
   assertions read parsed JSON response bodies. */
/**
 * The fee guarantee through a node outage (DESIGN §5 "Purchase"; ADR 0025): the marketplace
 * reaches the chain through a loopback relay that can refuse to pass transactions. A seller
 * leg settled on chain while sends fail leaves the purchase VERIFIED (the fee is not marked
 * failed); once the node takes transactions again the reconcile loop settles the fee, once.
 * A node that answers nothing makes a purchase 503 `ledger_unavailable`, never a 500.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { UsdcLedger } from '../../runtime/market/lanes/usdc-ledger.ts';
import { UsdcViemLedger } from '../../runtime/market/lanes/usdc-viem.ts';
import { seller, signedListing, signLeg, type Seller } from '../fixtures/market.ts';
import { useEvmLane } from './evm-lane.ts';
import { FEE_ADDRESSES, useMarket } from './harness.ts';

const lane = useEvmLane();
let relay: Server;
let sendsRefused = false;
let allRefused = false;
let relayed: UsdcLedger;

// Registered before useMarket, so the market opens on the relayed ledger.
beforeAll(async () => {
  relay = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      if (allRefused || (sendsRefused && body.includes('eth_sendRawTransaction'))) {
        res.writeHead(503).end();
        return;
      }
      void fetch(lane.node.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body }).then(async (r) => {
        res.writeHead(r.status, { 'content-type': 'application/json' }).end(Buffer.from(await r.arrayBuffer()));
      });
    });
  });
  relay.listen(0, '127.0.0.1');
  await new Promise((r) => relay.once('listening', r));
  const url = `http://127.0.0.1:${(relay.address() as AddressInfo).port}`;
  relayed = await UsdcViemLedger.open({ rpcUrl: url, relayerKey: lane.relayerKey, token: lane.token, pollingIntervalMs: 50 });
}, 60_000);
afterAll(async () => {
  await new Promise((r) => relay?.close(r));
});

const h = useMarket({ usdcLedger: () => relayed });
let s: Seller;
const buyer = privateKeyToAccount(generatePrivateKey());

beforeAll(async () => {
  s = seller();
  expect((await h.req('POST', '/api/v1/resources', { body: await signedListing(s, { name: 'Outage probe', tags: ['outage'], price: '0.02' }) })).status).toBe(201);
  await lane.deployed.mint(buyer.address, 1_000_000n);
}, 60_000);

describe('the USDC lane through node outages', () => {
  it('stays VERIFIED (not FEE_FAILED) and settles once the node is back', async () => {
    const q = (await h.req('POST', '/api/v1/route/quote', { body: { capability: 'outage', asset: 'USDC' } })).json;
    const legs = { seller: await signLeg(buyer, { to: s.evm.address, value: 20_000n, token: lane.token }), fee: await signLeg(buyer, { to: FEE_ADDRESSES.USDC, value: 100n, token: lane.token }) };
    const bought = await h.req('POST', '/api/v1/purchase', { headers: { 'idempotency-key': 'outage-1' }, body: { intent_id: q.intent_id, payment: { legs } } });
    expect(bought.json.status).toBe('VERIFIED');
    sendsRefused = true;
    // The seller submits its own leg on a node it reaches directly.
    await lane.submit(legs.seller.payload);
    await h.market.purchases.reconcile();
    const during = (await h.req('GET', `/api/v1/purchases/${q.intent_id}`)).json;
    expect(during.status).toBe('VERIFIED');
    expect(during.legs.seller.transaction).toBeTruthy();
    expect(during.legs.fee.transaction).toBeFalsy();
    expect(await lane.balance(FEE_ADDRESSES.USDC)).toBe(0n);
    sendsRefused = false;
    await h.market.purchases.reconcile();
    expect((await h.req('GET', `/api/v1/purchases/${q.intent_id}`)).json.status).toBe('SETTLED');
    expect(await lane.balance(FEE_ADDRESSES.USDC)).toBe(100n);
    await h.market.purchases.reconcile();
    expect(await lane.balance(FEE_ADDRESSES.USDC)).toBe(100n);
  });

  it('a node that answers nothing: purchase 503 ledger_unavailable, facilitator verify isValid false with the SDK reason; nothing recorded', async () => {
    const q = (await h.req('POST', '/api/v1/route/quote', { body: { capability: 'outage', asset: 'USDC' } })).json;
    const legs = { seller: await signLeg(buyer, { to: s.evm.address, value: 20_000n, token: lane.token }), fee: await signLeg(buyer, { to: FEE_ADDRESSES.USDC, value: 100n, token: lane.token }) };
    allRefused = true;
    try {
      const bought = await h.req('POST', '/api/v1/purchase', { headers: { 'idempotency-key': 'outage-2' }, body: { intent_id: q.intent_id, payment: { legs } } });
      expect(bought.status).toBe(503);
      expect(bought.json.error).toMatchObject({ type: 'api_error', code: 'ledger_unavailable' });
      const verify = await h.req('POST', '/facilitator/verify', { body: { x402Version: 2, paymentPayload: legs.seller, paymentRequirements: legs.seller.accepted } });
      expect(verify.status).toBe(200);
      expect(verify.json).toMatchObject({ isValid: false, invalidReason: 'invalid_exact_evm_transaction_simulation_failed' });
    } finally {
      allRefused = false;
    }
    expect((await h.req('GET', `/api/v1/purchases/${q.intent_id}`)).json.status).toBe('QUOTED');
    // Back up, the same legs buy.
    const again = await h.req('POST', '/api/v1/purchase', { headers: { 'idempotency-key': 'outage-3' }, body: { intent_id: q.intent_id, payment: { legs } } });
    expect(again.json.status).toBe('VERIFIED');
  });
});
