/* eslint-disable @typescript-eslint/no-unsafe-argument, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-return --
   assertions read parsed JSON response bodies. */
/**
 * A listing's `analytics.transactions` (marketplace.md:60) over HTTP: a settled purchase and a
 * served routed execution each count one; a routed execution the seller failed (SELLER_FAILED)
 * counts none. The count is the listing's, told by the purchase when it settles (DESIGN §5):
 * an engine (outbox relay and bus consumer) carries that message, as the runtime does.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Engine } from '../../runtime/engine/runtime.ts';
import { machineRegistry } from '../../runtime/machines.ts';
import { seller, signedListing, signLeg, type Seller } from '../fixtures/market.ts';
import { waitFor } from '../helpers/backends.ts';
import { FEE_ADDRESSES, useMarket } from './harness.ts';

const h = useMarket({ forward: { allowPrivate: true } });
let s: Seller;
let resourceId: string;
/** What the seller answers a routed execution with. */
let answer = 200;
let engine: Engine | undefined;
const sellerServer = http.createServer((req, res) => {
  req.resume();
  res.writeHead(answer, { 'content-type': 'application/json' }).end('{"tide":"high"}');
});
const buyer = privateKeyToAccount(generatePrivateKey());

beforeAll(async () => {
  s = seller();
  await new Promise<void>((r) => sellerServer.listen(0, '127.0.0.1', r));
  const endpoint = `http://127.0.0.1:${(sellerServer.address() as AddressInfo).port}/tides`;
  const listed = await h.req('POST', '/api/v1/resources', { body: await signedListing(s, { name: 'Tide tables', tags: ['tidecount'], endpoint, price: '0.02' }) });
  expect(listed.status).toBe(201);
  resourceId = listed.json.resource_id;
  await h.market.ledger.fund(buyer.address, 1_000_000n);
  engine = new Engine({ db: h.backend.db, bus: h.backend.bus, registry: machineRegistry() });
  await engine.start({ feed: false, sweeper: false });
}, 60_000);

afterAll(async () => {
  await engine?.stop();
  sellerServer.closeAllConnections();
  await new Promise((r) => sellerServer.close(r));
});

const transactions = async (): Promise<number> => (await h.req('GET', `/api/v1/resources/${resourceId}`)).json.analytics.transactions;
const quote = async (): Promise<string> => (await h.req('POST', '/api/v1/route/quote', { body: { capability: 'tidecount', asset: 'USDC' } })).json.intent_id;
const status = async (id: string): Promise<string> => (await h.req('GET', `/api/v1/purchases/${id}`)).json.status;
/** Events the listing actor took for `intentId`, by type. */
const listingHeard = async (intentId: string): Promise<string[]> =>
  (await h.backend.db.query<{ type: string }>(`SELECT event->>'type' AS type FROM actor_events WHERE actor_id = $1 AND event->>'intent_id' = $2 ORDER BY seq`, [resourceId, intentId])).rows.map((r) => r.type);

async function execute(intentId: string) {
  const fee = await signLeg(buyer, { to: FEE_ADDRESSES.USDC, value: 100n });
  const sellerPayment = Buffer.from(JSON.stringify(await signLeg(buyer, { to: s.evm.address, value: 20_000n }))).toString('base64');
  return h.req('POST', '/api/v1/route/execute', { body: { intent_id: intentId, fee_payment: { legs: { fee } }, seller_payment: sellerPayment } });
}

describe('GET /api/v1/resources/{id} analytics.transactions (marketplace.md:60)', () => {
  it('a settled purchase and a served routed execution count one each; a SELLER_FAILED execution counts none', async () => {
    const t0 = await transactions();

    const bought = await quote();
    const legs = { seller: await signLeg(buyer, { to: s.evm.address, value: 20_000n }), fee: await signLeg(buyer, { to: FEE_ADDRESSES.USDC, value: 100n }) };
    const verified = await h.req('POST', '/api/v1/purchase', { headers: { 'idempotency-key': `k_${bought}` }, body: { intent_id: bought, payment: { legs } } });
    expect(verified.json.status).toBe('VERIFIED');
    // The seller settles its own leg through the facilitator, as a stock x402 seller would.
    const header = JSON.parse(Buffer.from(verified.json.seller_payment.value, 'base64').toString());
    expect((await h.req('POST', '/facilitator/settle', { body: { x402Version: 2, paymentPayload: header, paymentRequirements: header.accepted } })).json.success).toBe(true);
    expect(await status(bought)).toBe('SETTLED');

    const routed = await quote();
    expect((await execute(routed)).json).toMatchObject({ status: 200 });
    await waitFor(async () => (await status(routed)) === 'SETTLED', 10_000, 'the routed execution SETTLED');
    await waitFor(async () => (await transactions()) === t0 + 2, 10_000, 'transactions up by 2');

    answer = 500;
    const failed = await quote();
    expect((await execute(failed)).json).toMatchObject({ status: 500, purchase_status: 'SELLER_FAILED' });
    // The listing heard how that execution ended (a failed paid call, ADR 0088), and no settlement with it.
    await waitFor(async () => (await listingHeard(failed)).includes('listing.executed'), 10_000, 'the listing told of the failed call');
    expect(await listingHeard(failed)).toEqual(['listing.executed']);
    expect(await transactions()).toBe(t0 + 2);
  });
});
