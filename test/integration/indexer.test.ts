import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backendFactories, type Backend } from '../helpers/backends.ts';
import { ChainHarness } from '../helpers/chain-harness.ts';

/**
 * Indexer + engine on the devnet: spec rules 6-7 and DESIGN.md §4's transition table, driven
 * by real transactions, blocks and reorgs through the JSON-RPC.
 */
describe.each(backendFactories)('indexer and payment intents on %s', (_name, open) => {
  let b: Backend;
  let h: ChainHarness;
  beforeAll(async () => {
    b = await open();
    h = await ChainHarness.start(b);
  });
  afterAll(async () => {
    await h.stop();
    await b.close();
  });

  it('rule 7: PAID exactly at depth 12 after detection and confirming, never before', async () => {
    const id = await h.createIntent();
    const payer = await h.customer();
    await h.pay(id, payer);
    await h.waitState(id, 'PAYMENT_DETECTED');
    await h.mine(1);
    await h.settle();
    expect((await h.context(id)).state).toBe('CONFIRMING');
    await h.mine(10);
    await h.settle();
    const at11 = await h.context(id);
    expect(at11.state).toBe('CONFIRMING');
    expect(at11.ctx.confirmations).toBe(11);
    await h.mine(1);
    await h.settle();
    const paid = await h.waitState(id, 'PAID');
    expect(paid.confirmations).toBe(12);
    expect(await h.webhookTypes(id)).toEqual(['payment.created', 'payment.detected', 'payment.confirming', 'payment.confirmed']);
  });

  it('DESIGN §3: a transaction that passes its required depth between two depth ticks still settles, once', async () => {
    const id = await h.createIntent();
    await h.pay(id, await h.customer());
    await h.waitState(id, 'PAYMENT_DETECTED');
    await h.mine(1);
    await h.settle();
    expect((await h.context(id)).state).toBe('CONFIRMING');
    // 20 blocks at once: the next depth signal is past depth 12; none was sent at 12 itself.
    await h.mine(20);
    await h.settle();
    const paid = await h.waitState(id, 'PAID');
    expect(paid.confirmations).toBeGreaterThanOrEqual(12);
    await h.mine(3);
    await h.settle();
    expect(await h.webhookTypes(id)).toEqual(['payment.created', 'payment.detected', 'payment.confirming', 'payment.confirmed']);
    // Settled rows leave the window: a later depth tick names no one.
    const { rows } = await b.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM chain_watch w JOIN chain_cursor c USING (network)
        WHERE w.network = 'test' AND w.actor_id = $1 AND w.block_height + w.required - 1 > c.depth_head`,
      [id],
    );
    expect(rows[0]!.n).toBe(0);
  });

  it('DESIGN §4: legs short of the amount -> UNDERPAID; legs over -> OVERPAID, then PAID at depth', async () => {
    const under = await h.createIntent();
    const over = await h.createIntent();
    const payer = await h.customer();
    await h.pay(under, payer, 500_000_000n);
    await h.pay(over, payer, 1_500_000_000n);
    await h.mine(1);
    await h.settle();
    expect((await h.context(under)).state).toBe('UNDERPAID');
    expect((await h.context(over)).state).toBe('OVERPAID');
    await h.mine(11);
    await h.settle();
    const paid = await h.waitState(over, 'PAID');
    expect(paid.excess).toBe('500000000');
    expect((await h.context(under)).state).toBe('UNDERPAID');
  });

  it('DESIGN §4: a failed receipt -> FAILED, and another transaction may still satisfy the intent', async () => {
    const id = await h.createIntent();
    const broke = await h.customer(0n);
    await h.pay(id, broke);
    await h.mine(1);
    await h.settle();
    await h.waitState(id, 'FAILED');
    await h.pay(id, await h.customer());
    await h.mine(12);
    await h.settle();
    await h.waitState(id, 'PAID');
  });

  it('rule 7: a reorg before settlement returns to AWAITING_PAYMENT; re-inclusion then PAID', async () => {
    const id = await h.createIntent();
    await h.pay(id, await h.customer());
    await h.mine(3);
    await h.settle();
    expect((await h.context(id)).state).toBe('CONFIRMING');
    const before = (await h.context(id)).ctx.tx!.block_hash;
    await h.rpc.reorg(3);
    await h.settle();
    const { rows } = await b.db.query(`SELECT 1 FROM actor_events WHERE actor_id = $1 AND event->>'type' = 'chain.reorged'`, [id]);
    expect(rows.length).toBe(1);
    const after = await h.context(id);
    expect(after.ctx.tx?.block_hash).not.toBe(before);
    await h.mine(12);
    await h.settle();
    await h.waitState(id, 'PAID');
    expect(await h.webhookTypes(id)).not.toContain('payment.reorged');
  });

  it('rule 7: a reorg after settlement sends payment.reorged and returns to AWAITING_PAYMENT; paying again settles', async () => {
    const id = await h.createIntent();
    const payer = await h.customer();
    const tx = await h.pay(id, payer);
    await h.mine(12);
    await h.settle();
    await h.waitState(id, 'PAID');
    await h.rpc.reorg(12, [tx]);
    await h.settle();
    await h.waitState(id, 'AWAITING_PAYMENT');
    const types = await h.webhookTypes(id);
    expect(types.filter((t) => t === 'payment.reorged')).toHaveLength(1);
    const { rows } = await b.db.query<{ data: { reason: string | null; status: string } }>(
      `SELECT payload->'event'->'data' AS data FROM outbox WHERE actor_id = $1 AND payload->'event'->>'type' = 'payment.reorged'`,
      [id],
    );
    expect(rows[0]!.data.status).toBe('AWAITING_PAYMENT');
    expect(rows[0]!.data.reason).toBeTruthy();
    await h.pay(id, payer);
    await h.mine(12);
    await h.settle();
    await h.waitState(id, 'PAID');
    expect((await h.webhookTypes(id)).filter((t) => t === 'payment.confirmed')).toHaveLength(2);
  });

  it('DESIGN §4 footnote 1: expiry, then a late payment still settles; cancel, then a late payment settles', async () => {
    const expiring = await h.createIntent({ ttlMs: 300 });
    await h.waitState(expiring, 'EXPIRED', 10_000);
    const canceled = await h.createIntent();
    const r = await h.engine.host.apply({ kind: 'payment_intent', id: canceled }, { type: 'intent.cancel', id: `cancel:${canceled}`, at: Date.now() });
    expect(r.status).toBe('EXPIRED');
    const payer = await h.customer();
    await h.pay(expiring, payer);
    await h.pay(canceled, payer);
    await h.mine(12);
    await h.settle();
    await h.waitState(expiring, 'PAID');
    await h.waitState(canceled, 'PAID');
  });

  it('rule 8 + DESIGN §4 Refunds: partial refunds up to the cap, each a new transfer matched by its reference; above the remainder refused', async () => {
    const id = await h.createIntent();
    await h.pay(id, await h.customer());
    await h.mine(12);
    await h.settle();
    await h.waitState(id, 'PAID');
    const first = await h.reserveRefund(id, 500_000_000n);
    expect(first.outcome).toBe('applied');
    expect((await h.reserveRefund(id, 480_000_001n)).outcome).toBe('ignored');
    await h.waitState(first.refundId, 'REQUIRES_SIGNATURE');
    await h.signRefund(first.refundId);
    await h.waitState(first.refundId, 'SUBMITTED');
    await h.mine(12);
    await h.settle();
    await h.waitState(first.refundId, 'CONFIRMED');
    await h.waitState(id, 'PARTIALLY_REFUNDED');
    const rest = await h.reserveRefund(id, 480_000_000n);
    expect(rest.outcome).toBe('applied');
    await h.signRefund(rest.refundId);
    await h.mine(12);
    await h.settle();
    await h.waitState(rest.refundId, 'CONFIRMED');
    const done = await h.waitState(id, 'REFUNDED');
    expect(done.refunds.map((r) => r.amount)).toEqual(['500000000', '480000000']);
    expect(await h.webhookTypes(first.refundId)).toEqual(['refund.created', 'refund.completed']);
  });
});
