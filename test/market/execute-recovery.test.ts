/* eslint-disable @typescript-eslint/no-unsafe-member-access -- assertions read parsed JSON response bodies. */
/**
 * Routed execution across a runtime that stopped mid-call (DESIGN §5 "Routed execution",
 * "Purchase actor states"): the journal is left as a dead process leaves it, and the next
 * process's timer and reconcile take over. A fee is never taken for a call with no recorded
 * answer, and is taken exactly once for a served one.
 */
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { beforeAll, describe, expect, it } from 'vitest';
import type { PurchaseEvent } from '../../machines/purchase/events.ts';
import { seller, signedListing, signLeg } from '../fixtures/market.ts';
import { FEE_ADDRESSES, useMarket } from './harness.ts';

const h = useMarket();
const buyer = privateKeyToAccount(generatePrivateKey());

beforeAll(async () => {
  await h.market.ledger.fund(buyer.address, 1_000_000n);
  const listed = await h.req('POST', '/api/v1/resources', { body: await signedListing(seller(), { name: 'Crashy cartographer', tags: ['cartographer'], price: '0.02' }) });
  expect(listed.status).toBe(201);
}, 60_000);

/** A quote moved to EXECUTING as `Executions.execute` records it, by a process that then dies. */
async function executing() {
  const q = await h.req('POST', '/api/v1/route/quote', { body: { capability: 'cartographer', asset: 'USDC' } });
  const intentId = q.json.intent_id as string;
  const p = (await h.market.purchases.read(intentId))!;
  const fee = await h.market.purchases.verifyLeg(p.ctx, 'fee', await signLeg(buyer, { to: FEE_ADDRESSES.USDC, value: 100n }));
  await h.market.purchases.bind('USDC', intentId, fee, 'fee');
  const target = { kind: 'purchase', id: intentId };
  const r = await h.host.apply(target, { type: 'purchase.execute', id: `execute:${target.id}`, at: Date.now(), fee, deadline_at: Date.now() + 45_000 } satisfies PurchaseEvent);
  expect(r.status).toBe('EXECUTING');
  return { target, fee };
}

describe('routed execution after a crash', () => {
  it('no answer recorded: the execution deadline ends it SELLER_FAILED and the fee authorization stays unused', async () => {
    const { target, fee } = await executing();
    const fee0 = await h.market.ledger.balanceOf(FEE_ADDRESSES.USDC);
    await h.market.executions.reconcile();
    expect((await h.market.purchases.read(target.id))!.status).toBe('EXECUTING');
    const { rows } = await h.backend.db.query<{ generation: number }>(`SELECT generation FROM timers WHERE actor_id = $1 AND name = 'execution'`, [target.id]);
    const r = await h.host.apply(target, { type: 'timer.expired', id: 'exec-timer', at: Date.now() + 46_000, timer: 'execution', generation: rows[0]!.generation });
    expect(r.status).toBe('SELLER_FAILED');
    await h.market.executions.reconcile();
    expect(await h.market.ledger.balanceOf(FEE_ADDRESSES.USDC)).toBe(fee0);
    expect(await h.market.ledger.authorizationState(fee.payer, fee.nonce)).toBe(false);
  });

  it('a served answer recorded but the fee not yet settled: reconcile settles it exactly once', async () => {
    const { target } = await executing();
    await h.host.apply(target, { type: 'execute.answered', id: `execute-answered:${target.id}`, at: Date.now(), seller_status: 200 } satisfies PurchaseEvent);
    const fee0 = await h.market.ledger.balanceOf(FEE_ADDRESSES.USDC);
    await Promise.all([h.market.executions.reconcile(), h.market.executions.reconcile()]);
    await h.market.executions.reconcile();
    expect((await h.market.purchases.read(target.id))!.status).toBe('SETTLED');
    expect((await h.market.ledger.balanceOf(FEE_ADDRESSES.USDC)) - fee0).toBe(100n);
  });
});
