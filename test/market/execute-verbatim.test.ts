/* eslint-disable @typescript-eslint/no-unsafe-member-access --
   assertions read parsed JSON response bodies. */
/**
 * Routed execution is pass-through both ways (marketplace.md:13 "forwards it verbatim", :95
 * "the seller's own x402 payment header, forwarded verbatim"; issue 21 "byte-identical header",
 * "body byte for byte"), and the seller's answer is read up to 1 MiB (docs/marketplace.md
 * "routed execution" 5), against a stock `@x402/express` seller.
 */
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../helpers/backends.ts';
import { signLeg } from '../fixtures/market.ts';
import { FEE_ADDRESSES, useMarket } from './harness.ts';
import { startStockSeller, type StockSeller } from './stock-seller.ts';

const h = useMarket({ forward: { allowPrivate: true, timeoutMs: 10_000 } });
const buyer = privateKeyToAccount(generatePrivateKey());
const MiB = 1024 * 1024;
/** Valid JSON no serializer writes: spaces, a line break, `\u00e9` escapes, keys out of order, a key's value with a trailing zero. */
const ODD_JSON = '{ "z" : [ 1 ,2.50 ],\n  "a":"caf\\u00e9 \\u2713", "m" : {"y":null , "b" : true} }';
const BINARY = Buffer.from([0x00, 0xff, 0xfe, 0x80, 0x0a, 0x7b, 0xc3, 0x28, 0xe2, 0x82, 0x00, 0xf0, 0x9f, 0x98]);
/** One byte shy of, exactly at, and one byte over the 1 MiB answer cap, as a JSON string. */
const sized = (n: number) => `"${'x'.repeat(n - 2)}"`;
let shop: StockSeller;

beforeAll(async () => {
  const json = (text: string) => (_req: unknown, res: { type(t: string): { send(b: string): void } }) => res.type('application/json').send(text);
  shop = await startStockSeller(h, buyer, [
    { tag: 'parrot', method: 'POST', path: '/echo', handler: (req, res) => void res.json({ echo: req.body as unknown }) },
    { tag: 'odd', method: 'GET', path: '/odd', handler: json(ODD_JSON) },
    { tag: 'blob', method: 'GET', path: '/blob', handler: (_req, res) => void res.type('application/octet-stream').send(BINARY) },
    { tag: 'atcap', method: 'GET', path: '/atcap', handler: json(sized(MiB)) },
    { tag: 'overcap', method: 'GET', path: '/overcap', handler: json(sized(MiB + 1)) },
  ]);
  await h.market.ledger.fund(buyer.address, 10_000_000n);
}, 60_000);

afterAll(() => shop?.close());

const quote = async (capability: string): Promise<string> => {
  const q = await h.req('POST', '/api/v1/route/quote', { body: { capability, asset: 'USDC' } });
  expect(q.status).toBe(201);
  return q.json.intent_id as string;
};
const feeBalance = () => h.market.ledger.balanceOf(FEE_ADDRESSES.USDC);
const status = async (id: string) => (await h.req('GET', `/api/v1/purchases/${id}`)).json.status as string;
const settlesAs = (id: string, want: string) => waitFor(async () => (await status(id)) === want, 10_000, `${id} ${want}`);
const execute = async (intent: string, sellerPayment: string, body?: unknown) =>
  h.req('POST', '/api/v1/route/execute', { body: { intent_id: intent, fee_payment: { legs: { fee: await signLeg(buyer, { to: FEE_ADDRESSES.USDC, value: 100n }) } }, seller_payment: sellerPayment, ...(body !== undefined && { body }) } });

describe('marketplace.md:13, :95 the seller payment header is forwarded verbatim', () => {
  it('a non-canonical header (indented JSON, keys reordered) reaches the seller as the exact string sent, and the stock seller accepts it', async () => {
    const intent = await quote('parrot');
    const stock = JSON.parse(Buffer.from(await shop.header('/echo', 'POST'), 'base64').toString('utf8')) as Record<string, unknown>;
    const reordered = { payload: stock.payload, accepted: stock.accepted, x402Version: stock.x402Version, ...stock };
    const header = Buffer.from(JSON.stringify(reordered, null, 3) + '\n').toString('base64');
    const r = await execute(intent, header, { say: 'olá' });
    expect([r.status, r.json.status], r.text).toEqual([200, 200]);
    expect(shop.seen['/echo']!.at(-1)).toBe(header);
    await settlesAs(intent, 'SETTLED');
  });

  it('issue 21 "body byte for byte": the JSON body reaches the seller as application/json with every character intact', async () => {
    const intent = await quote('parrot');
    const body = { say: 'olá 😀 \u0000 "q" \\', n: [1, 2.5, -0.001], deep: { e: 'é' } };
    const r = await execute(intent, await shop.header('/echo', 'POST'), body);
    expect([r.status, r.json.status], r.text).toEqual([200, 200]);
    expect(JSON.parse(shop.bodies['/echo']!.at(-1)!.toString('utf8'))).toEqual(body);
    expect(JSON.parse(r.json.body as string)).toEqual({ echo: body });
    await settlesAs(intent, 'SETTLED');
  });
});

describe('issue 21 "body byte for byte": the seller answer comes back unchanged', () => {
  it('non-canonical JSON (spaces, \\u00e9 escapes, keys out of order) is the exact text, body_encoding utf8', async () => {
    const intent = await quote('odd');
    const r = await execute(intent, await shop.header('/odd', 'GET'));
    expect([r.status, r.json.status], r.text).toEqual([200, 200]);
    expect(r.json.body).toBe(ODD_JSON);
    expect(r.json.body_encoding).toBe('utf8');
    expect(r.json.headers['content-type']).toMatch(/^application\/json/);
    await settlesAs(intent, 'SETTLED');
  });

  it('a binary body (application/octet-stream, not UTF-8) comes back as its base64, the same bytes', async () => {
    const intent = await quote('blob');
    const r = await execute(intent, await shop.header('/blob', 'GET'));
    expect([r.status, r.json.status], r.text).toEqual([200, 200]);
    expect(r.json.body_encoding).toBe('base64');
    expect(Buffer.from(r.json.body as string, 'base64').equals(BINARY)).toBe(true);
    expect(r.json.headers['content-type']).toBe('application/octet-stream');
    await settlesAs(intent, 'SETTLED');
  });
});

describe('docs/marketplace.md "routed execution" 5: the answer is read up to 1 MiB', () => {
  it('an answer of exactly 1 MiB is returned whole and the fee taken', async () => {
    const intent = await quote('atcap');
    const fee0 = await feeBalance();
    const r = await execute(intent, await shop.header('/atcap', 'GET'));
    expect([r.status, r.json.status], r.text.slice(0, 200)).toEqual([200, 200]);
    expect(r.json.body).toBe(sized(MiB));
    await settlesAs(intent, 'SETTLED');
    expect((await feeBalance()) - fee0).toBe(100n);
  });

  it('an answer one byte over: 502 seller_unreachable, SELLER_FAILED, the fee never taken', async () => {
    const intent = await quote('overcap');
    const fee0 = await feeBalance();
    const r = await execute(intent, await shop.header('/overcap', 'GET'));
    expect([r.status, r.json.error?.code], r.text.slice(0, 200)).toEqual([502, 'seller_unreachable']);
    expect(r.headers['content-type']).toMatch(/^application\/json/);
    expect(await status(intent)).toBe('SELLER_FAILED');
    // Given the time a served answer takes to settle its fee: none follows.
    await new Promise((res) => setTimeout(res, 300));
    expect(await status(intent)).toBe('SELLER_FAILED');
    expect(await feeBalance()).toBe(fee0);
  });
});
