/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-argument -- assertions read parsed JSON response bodies. */
/**
 * A routed execution's EXECUTING commits without waiting for the WAL flush (ADR 0074). These
 * tests hold the two facts that make that safe (DESIGN §5 "Routed execution": the fee settled
 * only when the seller answered below 400, one execution per intent):
 * - the statement that records EXECUTING is the only asynchronous one; the answer's record, which
 *   takes the fee, is durable and so flushes EXECUTING before any fee moves
 *   (test/integration/execute-round-trips.test.ts);
 * - an EXECUTING lost as a crash of PostgreSQL would lose it (the whole transaction gone while
 *   the call is out) takes no fee: the answer finds the intent QUOTED and records nothing, and a
 *   second execution with the same seller header is refused by the seller (its nonce is used),
 *   so it ends SELLER_FAILED with the fee authorization never used.
 * The seller is stock `@x402/express` settling through the marketplace's facilitator.
 */
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import express from 'express';
import { x402Client } from '@x402/core/client';
import { decodePaymentRequiredHeader, encodePaymentSignatureHeader } from '@x402/core/http';
import { HTTPFacilitatorClient } from '@x402/core/server';
import { ExactEvmScheme as ExactEvmClient } from '@x402/evm';
import { ExactEvmScheme as ExactEvmServer } from '@x402/evm/exact/server';
import { paymentMiddleware, x402ResourceServer } from '@x402/express';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seller, signedListing, signLeg, type Seller } from '../fixtures/market.ts';
import { waitFor } from '../helpers/backends.ts';
import { FEE_ADDRESSES, useMarket } from './harness.ts';

const h = useMarket({ forward: { allowPrivate: true, timeoutMs: 10_000 } });
const buyer = privateKeyToAccount(generatePrivateKey());
const client = new x402Client().register('eip155:8453', new ExactEvmClient(buyer));
let s: Seller;
let server: Server;
let endpoint: string;
/** Run once the seller has a paid request, before its payment is checked. */
let duringCall: (() => Promise<void>) | null = null;

/** The intent's rows in every table its EXECUTING transaction writes. */
const TABLES = [
  ['actors', 'id'],
  ['actor_events', 'actor_id'],
  ['processed_events', 'actor_id'],
  ['timers', 'actor_id'],
  ['outbox', 'actor_id'],
  ['market_leg_nonces', 'intent_id'],
] as const;

async function rowsOf(intentId: string): Promise<Record<string, unknown[]>> {
  const out: Record<string, unknown[]> = {};
  for (const [t, col] of TABLES) out[t] = (await h.backend.db.query(`SELECT to_jsonb(x) AS r FROM ${t} x WHERE ${col} = $1`, [intentId])).rows.map((r) => (r as { r: unknown }).r);
  return out;
}

/** Puts the intent's rows back as they were: what a crash of PostgreSQL does to a transaction whose commit never reached the disk. */
async function restore(intentId: string, saved: Record<string, unknown[]>): Promise<void> {
  await h.backend.db.tx(async (q) => {
    for (const [t, col] of [...TABLES].reverse()) await q.query(`DELETE FROM ${t} WHERE ${col} = $1`, [intentId]);
    for (const [t] of TABLES) await q.query(`INSERT INTO ${t} SELECT * FROM jsonb_populate_recordset(NULL::${t}, $1::jsonb)`, [JSON.stringify(saved[t])]);
  });
}

beforeAll(async () => {
  s = seller();
  const rs = new x402ResourceServer(new HTTPFacilitatorClient({ url: `${h.url}/facilitator` })).register('eip155:8453', new ExactEvmServer());
  const app = express();
  app.use(express.json());
  app.use((req, _res, next) => {
    const during = req.headers['payment-signature'] ? duringCall : null;
    void (during?.() ?? Promise.resolve()).then(() => next(), next);
  });
  app.use(paymentMiddleware({ 'POST /oracle': { accepts: { scheme: 'exact', price: '$0.02', network: 'eip155:8453', payTo: s.evm.address }, description: 'oracle' } }, rs));
  app.post('/oracle', (_req, res) => void res.json({ answer: 42 }));
  server = app.listen(0, '127.0.0.1');
  await new Promise<void>((r) => server.once('listening', () => r()));
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}/oracle`;
  expect((await h.req('POST', '/api/v1/resources', { body: await signedListing(s, { name: 'Oracle', tags: ['oracle'], description: 'Oracle', endpoint, method: 'POST', price: '0.02' }) })).status).toBe(201);
  await h.market.index.refresh();
  await h.market.ledger.fund(buyer.address, 10n ** 9n);
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server?.close(r));
});

async function quoteAndSign() {
  const q = (await h.req('POST', '/api/v1/route/quote', { body: { capability: 'oracle', asset: 'USDC' } })).json;
  const legs = q.payment_requirements.accepts[0].extra.legs;
  const fee = await signLeg(buyer, { to: legs.fee.payTo, value: BigInt(legs.fee.amount) });
  // The seller header as a buyer builds it: from the seller's own 402, with the stock @x402/evm client.
  const r = await fetch(endpoint, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
  expect(r.status).toBe(402);
  const sellerPayment = encodePaymentSignatureHeader(await client.createPaymentPayload(decodePaymentRequiredHeader(r.headers.get('payment-required')!)));
  return { intentId: q.intent_id as string, fee, sellerPayment, feeNonce: (fee as { payload: { authorization: { nonce: string } } }).payload.authorization.nonce };
}

const execute = (b: { intentId: string; fee: unknown; sellerPayment: string }) =>
  h.req('POST', '/api/v1/route/execute', { body: { intent_id: b.intentId, fee_payment: { legs: { fee: b.fee } }, seller_payment: b.sellerPayment, body: {} } });

describe('EXECUTING commits without waiting for the disk; the fee only after a durable record (ADR 0074)', () => {
  it('EXECUTING lost while the seller is called: no fee for the answer; the same header again is refused by the seller, SELLER_FAILED, the fee never used', async () => {
    const b = await quoteAndSign();
    const quoted = await rowsOf(b.intentId);
    expect((quoted.actors?.[0] as { state: string } | undefined)?.state).toBe('QUOTED');
    const feeBefore = await h.market.ledger.balanceOf(FEE_ADDRESSES.USDC);
    duringCall = async () => {
      duringCall = null;
      expect((await h.market.purchases.read(b.intentId))?.status).toBe('EXECUTING');
      await restore(b.intentId, quoted);
    };
    const first = await execute(b);
    // The seller served the call (its leg settled through the facilitator) and the buyer has the answer.
    expect(first.status, first.text).toBe(200);
    expect(first.json.status).toBe(200);
    // Its record found the intent QUOTED: nothing recorded, no fee. Waited for as this process
    // learns it, not for a set time: sent before, the next execution would be refused as the
    // EXECUTING one this process still holds.
    await waitFor(async () => h.host.seen(b.intentId)?.state === 'QUOTED', 10_000, 'the answer refused by the QUOTED row');
    const after = (await h.market.purchases.read(b.intentId))!;
    expect(after.status).toBe('QUOTED');
    expect(await h.market.ledger.balanceOf(FEE_ADDRESSES.USDC)).toBe(feeBefore);

    const again = await execute(b);
    expect(again.status, again.text).toBe(200);
    expect(again.json.status).toBe(402);
    await waitFor(async () => (await h.market.purchases.read(b.intentId))?.status === 'SELLER_FAILED', 10_000, 'the second call recorded');
    expect(await h.market.ledger.balanceOf(FEE_ADDRESSES.USDC)).toBe(feeBefore);
    const { rows } = await h.backend.db.query(`SELECT 1 FROM usdc_authorizations WHERE lower(nonce) = lower($1)`, [b.feeNonce]);
    expect(rows).toHaveLength(0);
  });

  it("an answer refused as its EXECUTING record was lost is not recorded on the intent's next execution: that one ends with its own answer, SELLER_FAILED, no fee", async () => {
    const b = await quoteAndSign();
    const quoted = await rowsOf(b.intentId);
    const feeBefore = await h.market.ledger.balanceOf(FEE_ADDRESSES.USDC);
    duringCall = async () => {
      duringCall = null;
      await restore(b.intentId, quoted);
    };
    // The first call's served answer, were it recorded again without its fee, waits until the next
    // execution is recorded; that execution's own answer then waits for it: the order a slow
    // record takes on a loaded machine, whatever the timing here.
    const apply = h.host.apply.bind(h.host);
    let recordedNext!: () => void;
    const nextRecorded = new Promise<void>((r) => (recordedNext = r));
    let executes = 0;
    let resent: Promise<unknown> | null = null;
    h.host.apply = async (target, event, companion) => {
      const e = event as { type: string; seller_status?: number; fee_tx?: string };
      if (target.id !== b.intentId || e.type !== 'execute.answered') {
        const r = await apply(target, event, companion);
        if (target.id === b.intentId && e.type === 'purchase.execute' && ++executes === 2) recordedNext();
        return r;
      }
      if (e.seller_status === 200 && e.fee_tx === undefined) {
        const late = nextRecorded.then(() => apply(target, event, companion));
        resent = late;
        return late;
      }
      if (resent) await resent.catch(() => undefined);
      return apply(target, event, companion);
    };
    try {
      const first = await execute(b);
      expect([first.status, first.json.status], first.text).toEqual([200, 200]);
      await waitFor(async () => h.host.seen(b.intentId)?.state === 'QUOTED', 10_000, 'the answer refused by the QUOTED row');
      const again = await execute(b);
      expect([again.status, again.json.status], again.text).toEqual([200, 402]);
      const end = await waitFor(async () => {
        const s = (await h.market.purchases.read(b.intentId))?.status;
        return s !== 'EXECUTING' && s;
      }, 10_000, 'the second execution ended');
      expect(end).toBe('SELLER_FAILED');
      expect(await h.market.ledger.balanceOf(FEE_ADDRESSES.USDC)).toBe(feeBefore);
    } finally {
      h.host.apply = apply;
    }
  });
});
