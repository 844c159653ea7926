/* eslint-disable @typescript-eslint/no-unsafe-member-access --
   assertions read parsed JSON response bodies. */
/**
 * Bad input on `POST /api/v1/route/execute` (issue 20's bad-input list on issue 21's route;
 * docs/marketplace.md "routed execution" 1-3, docs/errors.md) and bodies at the 256 KiB cap
 * (docs/marketplace.md "Bodies are JSON, at most 256 KiB"; DESIGN §5 "bodies capped at 256 KiB"),
 * against a stock `@x402/express` seller. Every refusal: its documented code, never a 5xx, the
 * seller never called, the intent still QUOTED, no balance moved.
 */
import http from 'node:http';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signLeg, toBase64 } from '../fixtures/market.ts';
import { waitFor } from '../helpers/backends.ts';
import { FEE_ADDRESSES, useMarket } from './harness.ts';
import { startStockSeller, type StockSeller } from './stock-seller.ts';

const h = useMarket({ forward: { allowPrivate: true, timeoutMs: 10_000 } });
const buyer = privateKeyToAccount(generatePrivateKey());
const SELLER_PRICE = 20_000n;
const FEE = 100n;
const CAP = 256 * 1024;
let shop: StockSeller;

beforeAll(async () => {
  shop = await startStockSeller(h, buyer, [{ tag: 'parrot', method: 'POST', path: '/echo', handler: (req, res) => void res.json({ echo: req.body as unknown }) }]);
  await h.market.ledger.fund(buyer.address, 10_000_000n);
}, 60_000);

afterAll(() => shop?.close());

const quote = async (): Promise<string> => {
  const q = await h.req('POST', '/api/v1/route/quote', { body: { capability: 'parrot', asset: 'USDC' } });
  expect(q.status).toBe(201);
  return q.json.intent_id as string;
};
const feeLeg = (o: Partial<Parameters<typeof signLeg>[1]> = {}) => signLeg(buyer, { to: FEE_ADDRESSES.USDC, value: FEE, ...o });
const status = async (id: string) => (await h.req('GET', `/api/v1/purchases/${id}`)).json.status as string;
const balances = async () => Promise.all([FEE_ADDRESSES.USDC, shop.s.evm.address, buyer.address].map((a) => h.market.ledger.balanceOf(a)));
const sellerCalls = () => shop.seen['/echo']?.length ?? 0;
const execute = (body: unknown) => h.req('POST', '/api/v1/route/execute', { body });

/** What every refused execution leaves: no call to the seller, the intent unused, no money moved. */
async function expectNothingDone(intent: string, calls: number, before: bigint[]): Promise<void> {
  // The seller call would be on the wire by now had the refusal come after it.
  await new Promise((r) => setTimeout(r, 50));
  expect(sellerCalls()).toBe(calls);
  expect(await status(intent)).toBe('QUOTED');
  expect(await balances()).toEqual(before);
}

type Case = [name: string, status: number, code: string, make: () => Promise<{ fee: unknown; seller: string }>, reason?: string];
const now = () => Math.floor(Date.now() / 1000);
const withSeller = async (fee: unknown) => ({ fee, seller: await shop.header('/echo', 'POST') });

/** A fee leg whose nonce another purchase already bound (docs/errors.md leg_replayed). */
async function replayedFee(): Promise<unknown> {
  const fee = await feeLeg();
  const other = await quote();
  const p = await h.req('POST', '/api/v1/purchase', { headers: { 'idempotency-key': `k_${Math.random()}` }, body: { intent_id: other, payment: { legs: { seller: await signLeg(buyer, { to: shop.s.evm.address, value: SELLER_PRICE }), fee } } } });
  expect(p.status, p.text).toBe(200);
  return fee;
}

const badFees: Case[] = [
  ['a fee leg to the wrong payTo', 402, 'invalid_payment', async () => withSeller(await feeLeg({ to: privateKeyToAccount(generatePrivateKey()).address })), 'invalid_exact_evm_recipient_mismatch'],
  ['a fee leg short by one unit', 402, 'invalid_payment', async () => withSeller(await feeLeg({ value: FEE - 1n })), 'invalid_exact_evm_payload_authorization_value_mismatch'],
  ['a fee leg whose window has passed', 402, 'invalid_payment', async () => withSeller(await feeLeg({ validBefore: now() - 1 })), 'invalid_exact_evm_payload_authorization_valid_before'],
  ['a fee leg signed for another EIP-712 domain (chainId 1)', 402, 'invalid_payment', async () => withSeller(await feeLeg({ domain: { chainId: 1 } })), 'invalid_exact_evm_signature'],
  ['a fee leg on another network', 402, 'invalid_payment', async () => withSeller(await feeLeg({ network: 'eip155:1' })), 'invalid_exact_evm_network_mismatch'],
  ['a fee leg whose nonce another purchase used', 409, 'leg_replayed', async () => withSeller(await replayedFee())],
  ['a fee leg of malformed base64', 402, 'invalid_payment', () => withSeller('!!!not base64'), 'invalid_payload'],
  ['a fee leg of base64 that is not JSON', 402, 'invalid_payment', () => withSeller(Buffer.from('{{{').toString('base64')), 'invalid_payload'],
];
const badSellerPayments: Case[] = [
  ['a seller_payment of malformed base64', 402, 'invalid_payment', async () => ({ fee: await feeLeg(), seller: '!!!not base64' }), 'invalid_payload'],
  ['a seller_payment of base64 that is not JSON', 402, 'invalid_payment', async () => ({ fee: await feeLeg(), seller: Buffer.from('{{{').toString('base64') }), 'invalid_payload'],
  ['a seller_payment of an unknown x402Version', 402, 'invalid_payment', async () => {
    const header = JSON.parse(Buffer.from(await shop.header('/echo', 'POST'), 'base64').toString('utf8')) as Record<string, unknown>;
    return { fee: await feeLeg(), seller: toBase64({ ...header, x402Version: 3 }) };
  }, 'invalid_payload'],
];

describe('issue 20 bad input on POST /api/v1/route/execute (docs/marketplace.md "routed execution" 1-3)', () => {
  it.each([...badFees, ...badSellerPayments])('%s → %i %s; seller not called, still QUOTED, no balance moved', async (_name, httpStatus, code, make, reason) => {
    const intent = await quote();
    const { fee, seller } = await make();
    const [calls, before] = [sellerCalls(), await balances()];
    const r = await execute({ intent_id: intent, fee_payment: { legs: { fee } }, seller_payment: seller, body: {} });
    expect([r.status, r.json.error?.code], r.text).toEqual([httpStatus, code]);
    if (reason) expect(r.json.error.message).toContain(reason);
    await expectNothingDone(intent, calls, before);
  });
});

/** The JSON text of `body` followed by spaces up to exactly `size` bytes (still one JSON document). */
const padded = (body: unknown, size: number): Buffer => {
  const text = JSON.stringify(body);
  expect(size).toBeGreaterThan(text.length);
  return Buffer.from(text + ' '.repeat(size - Buffer.byteLength(text)));
};
/** The same bytes sent in chunks with no Content-Length, so the cap is met while streaming. */
function streamed(path: string, body: Buffer, headers: Record<string, string> = {}): Promise<{ status: number; json: { error?: { code: string } } }> {
  return new Promise((resolve, reject) => {
    const u = new URL(path, h.url);
    const req = http.request({ method: 'POST', hostname: u.hostname, port: u.port, path: u.pathname, headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked', ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, json: JSON.parse(Buffer.concat(chunks).toString('utf8')) as { error?: { code: string } } }));
    });
    // The server may answer and close before the last chunk is written.
    req.on('error', reject);
    for (let at = 0; at < body.length; at += 16 * 1024) req.write(body.subarray(at, at + 16 * 1024));
    req.end();
  });
}

describe('DESIGN §5 "bodies capped at 256 KiB" on purchase and execute, with valid legs', () => {
  const purchaseBody = async (intent: string) => ({ intent_id: intent, payment: { legs: { seller: await signLeg(buyer, { to: shop.s.evm.address, value: SELLER_PRICE }), fee: await feeLeg() } } });
  const executeBody = async (intent: string) => ({ intent_id: intent, fee_payment: { legs: { fee: await feeLeg() } }, seller_payment: await shop.header('/echo', 'POST'), body: { say: 'hi' } });
  const idem = () => ({ 'idempotency-key': `k_${Math.random()}` });

  it.each([
    ['purchase', '/api/v1/purchase', purchaseBody],
    ['execute', '/api/v1/route/execute', executeBody],
  ] as const)('a real %s one byte over 256 KiB → 413 payload_too_large (by Content-Length and while streaming); still QUOTED, nothing settled or called', async (_name, path, make) => {
    const intent = await quote();
    const body = await make(intent);
    const [calls, before] = [sellerCalls(), await balances()];
    const r = await h.req('POST', path, { headers: idem(), body: padded(body, CAP + 1) });
    expect([r.status, r.json.error?.code], r.text).toEqual([413, 'payload_too_large']);
    const s = await streamed(path, padded(body, CAP + 1), idem());
    expect([s.status, s.json.error?.code]).toEqual([413, 'payload_too_large']);
    await expectNothingDone(intent, calls, before);
  });

  it('a real purchase of exactly 256 KiB is not refused for size: VERIFIED', async () => {
    const intent = await quote();
    const r = await h.req('POST', '/api/v1/purchase', { headers: idem(), body: padded(await purchaseBody(intent), CAP) });
    expect(r.status, r.text).toBe(200);
    expect(r.json.status).toBe('VERIFIED');
  });

  it('a real execute of exactly 256 KiB is not refused for size: forwarded, answered, then SETTLED with the fee', async () => {
    const intent = await quote();
    const [calls, fee0] = [sellerCalls(), await h.market.ledger.balanceOf(FEE_ADDRESSES.USDC)];
    const r = await h.req('POST', '/api/v1/route/execute', { body: padded(await executeBody(intent), CAP) });
    expect([r.status, r.json.status], r.text).toEqual([200, 200]);
    expect(JSON.parse(r.json.body as string)).toEqual({ echo: { say: 'hi' } });
    expect(sellerCalls()).toBe(calls + 1);
    await waitFor(async () => (await status(intent)) === 'SETTLED', 10_000, 'SETTLED');
    expect((await h.market.ledger.balanceOf(FEE_ADDRESSES.USDC)) - fee0).toBe(FEE);
  });
});
