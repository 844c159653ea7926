/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment -- assertions read parsed JSON response bodies. */
/**
 * The marketplace process SIGKILLed in the middle of a routed execution (issue 21 "Fault
 * test"; DESIGN §5 "Routed execution"): while the call is on the wire, or after the seller's
 * answer went back to the buyer but before it was recorded (ADR 0046). Either way the purchase
 * is left EXECUTING with no answer, the next process's reconcile takes no fee for it, and its
 * deadline ends it SELLER_FAILED with the fee authorization never used.
 */
import type { ChildProcess } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import http from 'node:http';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { describe, expect, it } from 'vitest';
import { ActorHost } from '../../runtime/engine/actor-host.ts';
import { machineRegistry } from '../../runtime/machines.ts';
import { openMarket, type MarketServices } from '../../runtime/market/index.ts';
import type { Db } from '../../storage/db.ts';
import { openReal, realAvailable } from '../helpers/backends.ts';
import { seller, signedListing, signLeg } from '../fixtures/market.ts';
import { FEE_ADDRESSES } from './harness.ts';
import { startChild } from './market-child.ts';

type Left = { market: MarketServices; host: ActorHost; db: Db; intentId: string };

/**
 * A listed seller served by `answer` (which may kill the child), a funded buyer and a
 * marketplace child process (`env`); `run` gets the child's execute call (and `printed`, to
 * wait for a line the child writes where a fault hook stopped it); once the child is dead,
 * `left` checks what the next process makes of the purchase it left behind.
 */
async function killedDuring(
  answer: (res: http.ServerResponse, kill: () => void) => void,
  env: Record<string, string>,
  run: (call: Promise<Response>, kill: () => void, printed: (line: string) => Promise<void>) => Promise<void>,
  left: (l: Left) => Promise<void>,
): Promise<{ sellerHits: number }> {
  const b = await openReal();
  let child: ChildProcess | undefined;
  const kill = () => child?.kill('SIGKILL');
  let sellerHits = 0;
  const sellerServer = http.createServer((req, res) => {
    sellerHits++;
    req.resume();
    answer(res, kill);
  });
  try {
    await new Promise<void>((r) => sellerServer.listen(0, '127.0.0.1', r));
    const endpoint = `http://127.0.0.1:${(sellerServer.address() as AddressInfo).port}/map`;
    const host = new ActorHost({ db: b.db, bus: b.bus, registry: machineRegistry() });
    const market = openMarket(b.db, host, { feeAddresses: FEE_ADDRESSES });
    const s = seller();
    await market.listings.register(await signedListing(s, { name: 'Doomed mapmaker', tags: ['mapmaker'], endpoint, price: '0.02' }));
    const buyer = privateKeyToAccount(generatePrivateKey());
    await market.ledger.fund(buyer.address, 1_000_000n);

    const started = startChild({ SCHEMA: b.schema!, NAMESPACE: b.namespace!, ...env });
    child = started.p;
    const exited = new Promise<NodeJS.Signals | null>((r) => started.p.once('exit', (_c, sig) => r(sig)));
    const url = await started.url;
    const q = await (await fetch(`${url}/api/v1/route/quote`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ capability: 'mapmaker', asset: 'USDC' }) })).json();
    const fee = await signLeg(buyer, { to: FEE_ADDRESSES.USDC, value: 100n });
    const sellerPayment = Buffer.from(JSON.stringify(await signLeg(buyer, { to: s.evm.address, value: 20_000n }))).toString('base64');
    const call = fetch(`${url}/api/v1/route/execute`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ intent_id: q.intent_id, fee_payment: { legs: { fee } }, seller_payment: sellerPayment }) });
    await run(call, kill, started.printed);
    expect(await exited).toBe('SIGKILL');
    await left({ market, host, db: b.db, intentId: q.intent_id as string });
    return { sellerHits };
  } finally {
    kill();
    sellerServer.closeAllConnections();
    await new Promise((r) => sellerServer.close(r));
    await b.close();
  }
}

/** A call with no recorded answer: the next process's reconcile takes no fee, and its deadline ends it SELLER_FAILED with the fee authorization never used. */
async function neverTakesFee({ market, host, db, intentId }: Left): Promise<void> {
  const left = (await market.purchases.read(intentId))!;
  expect([left.status, left.ctx.execution?.seller_status]).toEqual(['EXECUTING', null]);
  await market.executions.reconcile();
  expect(await market.ledger.balanceOf(FEE_ADDRESSES.USDC)).toBe(0n);
  const { rows } = await db.query<{ generation: number }>(`SELECT generation FROM timers WHERE actor_id = $1 AND name = 'execution'`, [intentId]);
  const r = await host.apply({ kind: 'purchase', id: intentId }, { type: 'timer.expired', id: 'exec-deadline', at: Date.now() + 60_000, timer: 'execution', generation: rows[0]!.generation });
  expect(r.status).toBe('SELLER_FAILED');
  await market.executions.reconcile();
  expect(await market.ledger.balanceOf(FEE_ADDRESSES.USDC)).toBe(0n);
  const p = (await market.purchases.read(intentId))!;
  expect(await market.ledger.authorizationState(p.ctx.execution!.fee.payer, p.ctx.execution!.fee.nonce)).toBe(false);
}

/**
 * A served call whose fee step the child died in: the next process's reconcile leaves the fee
 * taken exactly once (`moved`: whether the dead process had moved it already), its nonce used by
 * one transfer, and the purchase SETTLED with that transfer; a second reconcile changes nothing.
 */
const feeTakenOnce = (moved: boolean) => async ({ market, db, intentId }: Left): Promise<void> => {
  const before = (await market.purchases.read(intentId))!;
  expect(before.ctx.execution?.seller_status).toBe(200);
  expect(await market.ledger.balanceOf(FEE_ADDRESSES.USDC)).toBe(moved ? 100n : 0n);
  const { payer, nonce } = before.ctx.execution!.fee;
  for (let i = 0; i < 2; i++) {
    await market.executions.reconcile();
    const p = (await market.purchases.read(intentId))!;
    expect(p.status).toBe('SETTLED');
    expect(await market.ledger.balanceOf(FEE_ADDRESSES.USDC)).toBe(100n);
    expect(await market.ledger.balanceOf(payer)).toBe(1_000_000n - 100n);
    const uses = await db.query<{ tx_hash: string }>(`SELECT tx_hash FROM usdc_authorizations WHERE authorizer = $1 AND nonce = $2`, [payer.toLowerCase(), nonce.toLowerCase()]);
    expect(uses.rows.map((r) => r.tx_hash)).toEqual([p.ctx.execution!.fee.tx]);
  }
};

const served = (res: http.ServerResponse) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"map":"here"}');

/** The buyer gets the served answer, then the child stops in its fee step and is killed there. */
async function killedInFeeStep(call: Promise<Response>, kill: () => void, printed: (line: string) => Promise<void>): Promise<void> {
  const stopped = printed('fee-fault');
  const r = await call;
  expect(r.status).toBe(200);
  expect(await r.json()).toMatchObject({ status: 200, body: '{"map":"here"}' });
  await stopped;
  kill();
}

describe.skipIf(!realAvailable)('routed execution: marketplace killed mid-execution (PostgreSQL + NATS)', () => {
  it('killed while the call is on the wire: never settles the fee for a call whose answer was not recorded', { timeout: 60_000 }, async () => {
    const { sellerHits } = await killedDuring(
      (_res, kill) => kill(),
      {},
      async (call) => {
        await expect(call).rejects.toThrow();
      },
      neverTakesFee,
    );
    expect(sellerHits).toBe(1);
  });

  it('killed after the buyer got the answer, before it was recorded: the buyer keeps the answer, no fee is ever taken', { timeout: 60_000 }, async () => {
    const { sellerHits } = await killedDuring(
      (res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"map":"here"}'),
      { HOLD_ANSWERS: '1' },
      async (call, kill) => {
        const r = await call;
        expect(r.status).toBe(200);
        expect(await r.json()).toMatchObject({ status: 200, body: '{"map":"here"}', purchase_status: 'EXECUTING' });
        kill();
      },
      neverTakesFee,
    );
    expect(sellerHits).toBe(1);
  });

  // Issue 21 "Fault test": killed during or right after the fee settlement, a fee is never settled twice.
  it.each([
    ['before-transfer', 'after the answer was recorded, before the fee transfer: the next process takes the fee once', false],
    ['after-transfer', 'after the fee transfer committed, before the purchase recorded it: the next process records that transfer and takes no second one', true],
    ['after-record', 'right after the statement that records the answer and moves the fee: the next process takes nothing more', true],
  ] as const)('killed in the fee step (%s), %s (issue 21 "never settles a fee twice")', { timeout: 60_000 }, async (fault, _what, moved) => {
    const { sellerHits } = await killedDuring(served, { FEE_FAULT: fault }, killedInFeeStep, feeTakenOnce(moved));
    expect(sellerHits).toBe(1);
  });
});
