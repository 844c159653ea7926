import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { NETWORKS } from '../../machines/chain/address.ts';
import { refundReference } from '../../machines/chain/reference.ts';
import { encodeSignedTx } from '../../machines/chain/tx.ts';
import { generateWallet, sign } from '../../runtime/chain/codec/keys.ts';
import { ChainIndexer } from '../../runtime/chain/indexer/indexer.ts';
import { buildRefundTx } from '../../runtime/chain/payment-tx.ts';
import type { ActorEnvelope } from '../../runtime/engine/actor-types.ts';
import { leaseRunsOut, recordingBus, useEmbeddedChain } from '../helpers/hand-indexer.ts';

/**
 * Issue 27, ADR 0016: a reorg that takes a refund transfer off the chain without the node
 * putting it back in its mempool (`dev_reorg` with `drop`) must end with the refund back at
 * REQUIRES_SIGNATURE: `chain.reorged` alone leaves it SUBMITTED (waiting for a transfer that
 * will never come), so the indexer must also say `chain.tx.dropped`, at a newer position. The
 * transaction's watch row is what remembers it, so when the pass that should say so fails
 * (a publish error, a crash), the next lease holder says it instead.
 */
describe('a transfer reorged off the chain and out of the mempool is reported dropped (PGlite)', () => {
  const chain = useEmbeddedChain();

  /** A refund actor whose transfer from a funded merchant is sent (pending). */
  async function sentRefund(): Promise<{ id: string; tx: string }> {
    const merchant = generateWallet('test');
    const customer = generateWallet('test');
    await chain.rpc.faucet(merchant.address, 10_000_000_000n);
    const id = `re_drop_${randomBytes(4).toString('hex')}`;
    const reference = refundReference(randomBytes(20));
    await chain.host.apply(
      { kind: 'refund', id, merchant: 'm', mode: 'test' },
      { type: 'refund.create', id: `c:${id}`, at: Date.now(), refund_id: id, payment_intent: 'pay_x', merchant_id: 'm', mode: 'test', amount: '5000', chain_id: NETWORKS.test.chainId, from: merchant.address, to: customer.address, reference },
    );
    const unsigned = buildRefundTx({ chain_id: NETWORKS.test.chainId, from: merchant.address, to: customer.address, amount: 5000n, reference }, { chainId: NETWORKS.test.chainId, publicKey: merchant.publicKey, nonce: 0n });
    return { id, tx: await chain.rpc.sendRawTransaction(encodeSignedTx(sign(unsigned, merchant.secretKey))) };
  }

  /** A refund actor whose transfer is included in a block, 3 deep. */
  async function includedRefund(indexer: ChainIndexer): Promise<{ id: string; tx: string }> {
    const sent = await sentRefund();
    await chain.rpc.mine(3);
    await indexer.tick();
    return sent;
  }

  const signals = (log: ActorEnvelope[], id: string, type: string) => log.filter((e) => e.target.id === id && e.event.type === type).map((e) => Number(e.event.pos));
  const watchRows = async (tx: string) => (await chain.b.db.query<{ block_height: number | null }>(`SELECT block_height FROM chain_watch WHERE network = 'test' AND tx_hash = $1`, [tx])).rows;

  async function deliver(log: ActorEnvelope[], id: string): Promise<string> {
    for (const e of log.filter((x) => x.target.id === id)) await chain.host.apply({ kind: 'refund', id }, e.event);
    const { rows } = await chain.b.db.query<{ state: string }>(`SELECT state FROM actors WHERE id = $1`, [id]);
    return rows[0]!.state;
  }

  it('in the pass that followed the reorg, and by the next holder when that pass failed', async () => {
    const log: ActorEnvelope[] = [];
    const failing = new Set<string>();
    const a = new ChainIndexer({ network: 'test', rpc: chain.rpc, db: chain.b.db, bus: recordingBus(log, failing), holder: 'a', startHeight: 0 });
    await chain.rpc.mine(2);
    await a.tick();

    // The pass that follows the reorg says both: reorged, then dropped at a newer position.
    const first = await includedRefund(a);
    expect(await deliver(log, first.id)).toBe('CONFIRMING');
    await chain.rpc.reorg(3, [first.tx]);
    await a.tick();
    const [reorged] = signals(log, first.id, 'chain.reorged');
    expect(signals(log, first.id, 'chain.tx.dropped')).toEqual([expect.any(Number)]);
    expect(signals(log, first.id, 'chain.tx.dropped')[0]).toBeGreaterThan(reorged!);
    expect(await watchRows(first.tx)).toEqual([]);
    expect(await deliver(log, first.id)).toBe('REQUIRES_SIGNATURE');

    // The pass fails before the drop is said; another holder says it, once.
    const second = await includedRefund(a);
    await chain.rpc.reorg(3, [second.tx]);
    failing.add('chain.test.tx.dropped');
    await expect(a.tick()).rejects.toThrow(/publish/);
    expect(signals(log, second.id, 'chain.reorged')).toHaveLength(1);
    expect(signals(log, second.id, 'chain.tx.dropped')).toEqual([]);
    expect(await watchRows(second.tx)).toEqual([{ block_height: null }]);
    await a.stop();
    failing.clear();
    const next = new ChainIndexer({ network: 'test', rpc: chain.rpc, db: chain.b.db, bus: recordingBus(log, failing), holder: 'b', startHeight: 0 });
    await next.tick();
    await next.tick();
    expect(signals(log, second.id, 'chain.tx.dropped')).toHaveLength(1);
    expect(signals(log, second.id, 'chain.tx.dropped')[0]).toBeGreaterThan(signals(log, second.id, 'chain.reorged')[0]!);
    expect(await watchRows(second.tx)).toEqual([]);
    expect(await deliver(log, second.id)).toBe('REQUIRES_SIGNATURE');
    await next.stop();
  }, 120_000);

  /**
   * ADR 0033: the pending set lives in PostgreSQL. Holder `a` sees a refund transfer pending,
   * then stops answering (its lease runs out, as a crash or a long pause would); the node evicts
   * the transfer, never mined. Holder `b` must report the drop it never saw pending itself.
   */
  it('a transfer seen pending by one holder and dropped under the next is reported dropped by the next', async () => {
    const log: ActorEnvelope[] = [];
    const evicted = new Set<string>();
    // The node as both holders see it: the devnet, but evicted transfers are gone from its mempool (never mined).
    const rpc = Object.assign(Object.create(chain.rpc) as typeof chain.rpc, {
      pendingTransactions: async () => (await chain.rpc.pendingTransactions()).filter((t) => !evicted.has(t.hash)),
    });
    const a = new ChainIndexer({ network: 'test', rpc, db: chain.b.db, bus: recordingBus(log), holder: 'a3', startHeight: 0 });
    await chain.rpc.mine(1);
    await a.tick();
    const { id, tx } = await sentRefund();
    await a.tick();
    expect(signals(log, id, 'chain.tx.seen')).toHaveLength(1);
    expect(await deliver(log, id)).toBe('SUBMITTED');

    // `a` goes quiet without releasing its lease; the transfer is evicted; `b` takes over once the lease ran out.
    evicted.add(tx);
    await leaseRunsOut(chain.b.db, 'test', 'a3');
    const b = new ChainIndexer({ network: 'test', rpc, db: chain.b.db, bus: recordingBus(log), holder: 'b3', startHeight: 0 });
    await b.tick();
    expect(b.isLeader()).toBe(true);
    const drops = signals(log, id, 'chain.tx.dropped');
    expect(drops).toHaveLength(1);
    expect(drops[0]).toBeGreaterThan(signals(log, id, 'chain.tx.seen')[0]!);
    expect(await deliver(log, id)).toBe('REQUIRES_SIGNATURE');
    // Said once: the row is gone with it.
    await b.tick();
    expect(signals(log, id, 'chain.tx.dropped')).toHaveLength(1);
    expect((await chain.b.db.query(`SELECT 1 FROM chain_pending WHERE network = 'test' AND tx_hash = $1`, [tx])).rows).toEqual([]);
    await b.stop();
  }, 120_000);
});
