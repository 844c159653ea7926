import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { paymentReference } from '../../machines/chain/reference.ts';
import { generateWallet } from '../../runtime/chain/codec/keys.ts';
import { ChainIndexer } from '../../runtime/chain/indexer/indexer.ts';
import type { ActorEnvelope } from '../../runtime/engine/actor-types.ts';
import { payIntent } from '../helpers/chain-harness.ts';
import { recordingBus, useEmbeddedChain } from '../helpers/hand-indexer.ts';
import { storyOf } from '../helpers/webhook-story.ts';

/**
 * ADR 0033 (issue 27, gap 3): an intent hit by the lost-confirmation defect of indexers older
 * than positions (its re-mined inclusion overtook the reorg and was dropped as handled) waits
 * AWAITING_PAYMENT for good while its transfer is canonical and deep. The indexer's reconcile
 * pass, run once by a new lease holder, re-issues the chain's truth to it as a positioned
 * inclusion; intents in step are left alone, and a second pass re-issues nothing.
 */
describe('the indexer reconciles intents an older indexer left out of step with the chain (PGlite)', () => {
  const chain = useEmbeddedChain();

  const state = async (id: string) => (await chain.b.db.query<{ state: string }>(`SELECT state FROM actors WHERE id = $1`, [id])).rows[0]!.state;
  const forIntent = (log: ActorEnvelope[], id: string) => log.filter((e) => e.target.id === id);
  async function deliver(events: ActorEnvelope[]): Promise<void> {
    for (const e of events) await chain.host.apply(e.target, e.event);
  }
  async function intent(merchant: string, treasury: string): Promise<string> {
    const id = `pay_rec_${randomBytes(4).toString('hex')}`;
    const now = Date.now();
    await chain.host.apply(
      { kind: 'payment_intent', id, merchant: 'm', mode: 'test' },
      { type: 'intent.create', id: `c:${id}`, at: now, intent_id: id, merchant_id: 'm', mode: 'test', currency: 'ANM', requested_amount: null, anm_amount: '1000000000', payment_address: merchant, treasury_address: treasury, payment_reference: paymentReference(randomBytes(20)), expires_at: now + 3_600_000 },
    );
    return id;
  }

  it('re-issues a deep canonical transfer to the intent that lost it, once; intents in step get nothing', async () => {
    const [merchant, treasury, payer] = [generateWallet('test'), generateWallet('test'), generateWallet('test')];
    await chain.rpc.faucet(payer.address, 100_000_000_000n);
    await chain.rpc.mine(2);
    const log: ActorEnvelope[] = [];
    const old = new ChainIndexer({ network: 'test', rpc: chain.rpc, db: chain.b.db, bus: recordingBus(log), holder: 'old', startHeight: 0 });
    await old.tick();

    // Stranded: settled by an inclusion, then reopened by a reorg signal that came after the
    // re-mined inclusion, as the old indexer's unpositioned signals could (issue 27).
    const stranded = await intent(merchant.address, treasury.address);
    const tx = await payIntent(chain.b.db, chain.rpc, stranded, payer);
    // In step: paid, included, 3 deep and following the chain.
    const inStep = await intent(merchant.address, treasury.address);
    await chain.rpc.mine(13);
    await old.tick();
    const inclusion = forIntent(log, stranded).find((e) => e.event.type === 'chain.tx.included')!.event;
    const { pos: _p, ...unpositioned } = inclusion as unknown as Record<string, unknown>;
    const settled = { ...unpositioned, head: Number(inclusion.head) + 12, id: 'old:inc' } as unknown as ActorEnvelope['event'];
    await deliver([{ target: { kind: 'payment_intent', id: stranded }, event: settled }]);
    expect(await state(stranded)).toBe('PAID');
    await deliver([{ target: { kind: 'payment_intent', id: stranded }, event: { type: 'chain.reorged', id: 'old:reorg', at: Date.now(), tx_hash: tx, head: Number(inclusion.head) } }]);
    expect(await state(stranded)).toBe('AWAITING_PAYMENT');
    const receipt = (await chain.rpc.getTransactionReceipt(tx))!;
    expect((await chain.rpc.blockNumber()) - receipt.block_height + 1).toBeGreaterThanOrEqual(12);

    await payIntent(chain.b.db, chain.rpc, inStep, payer);
    await chain.rpc.mine(3);
    await old.tick();
    await deliver(forIntent(log, inStep));
    expect(await state(inStep)).toBe('CONFIRMING');
    await old.stop();

    // A new process takes the lease: its first pass reconciles.
    const repaired: string[][] = [];
    const fresh: ActorEnvelope[] = [];
    const next = new ChainIndexer({ network: 'test', rpc: chain.rpc, db: chain.b.db, bus: recordingBus(fresh), holder: 'new', startHeight: 0, onReconciled: (ids) => repaired.push(ids) });
    await next.tick();
    expect(repaired).toEqual([[stranded]]);
    const reissued = forIntent(fresh, stranded);
    expect(reissued.map((e) => [e.event.type, e.event.tx_hash, e.event.block_hash, typeof e.event.pos])).toEqual([['chain.tx.included', tx, receipt.block_hash, 'number']]);
    expect(forIntent(fresh, inStep).map((e) => e.event.type)).not.toContain('chain.tx.included');
    await deliver(reissued);
    expect(await state(stranded)).toBe('PAID');
    const facts = (await storyOf(chain.b.db, stranded)).facts.map((f) => f.type);
    expect(facts.slice(-2)).toEqual(['payment.confirming', 'payment.confirmed']);

    // Idempotent: the next process (and the next pass of this one) re-issue nothing.
    await next.tick();
    await next.stop();
    const again: ActorEnvelope[] = [];
    const third = new ChainIndexer({ network: 'test', rpc: chain.rpc, db: chain.b.db, bus: recordingBus(again), holder: 'third', startHeight: 0 });
    await third.tick();
    expect(forIntent(again, stranded)).toEqual([]);
    expect(repaired).toHaveLength(1);
    await third.stop();
  }, 120_000);
});
