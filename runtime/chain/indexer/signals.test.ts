/** Chain signals expand into the actor events the machines take (docs/adr/0010-indexer.md). */
import { describe, expect, it } from 'vitest';
import { includedMsgId, signalEnvelopes, type IncludedSignal } from './signals.ts';

const signal: IncludedSignal = {
  block_height: 7,
  block_hash: 'h7',
  head: 9,
  at: 1_000,
  txs: [
    { kind: 'payment_intent', id: 'pi_1', tx_hash: 't1', from: 'tanm1a', merchant_leg: '980', fee_leg: '20', receipt: 'success' },
    { kind: 'refund', id: 're_2', tx_hash: 't2', from: 'tanm1b', merchant_leg: '5', fee_leg: '0', receipt: 'failed' },
  ],
};

describe('signalEnvelopes', () => {
  it('turns one included signal into one chain.tx.included event per transaction, ids as per-tx signals had them', () => {
    expect(signalEnvelopes('chain.test.included', signal)).toEqual([
      {
        target: { kind: 'payment_intent', id: 'pi_1' },
        event: { type: 'chain.tx.included', id: 'inc:t1:h7', at: 1_000, tx_hash: 't1', from: 'tanm1a', merchant_leg: '980', fee_leg: '20', block_height: 7, block_hash: 'h7', receipt: 'success', head: 9 },
      },
      {
        target: { kind: 'refund', id: 're_2' },
        event: { type: 'chain.tx.included', id: 'inc:t2:h7', at: 1_000, tx_hash: 't2', from: 'tanm1b', merchant_leg: '5', fee_leg: '0', block_height: 7, block_hash: 'h7', receipt: 'failed', head: 9 },
      },
    ]);
  });

  it('fans a block signal out and passes per-actor signals (tx.included of older indexers too) through', () => {
    const block = { head: 9, hash: 'h9', at: 5, targets: [{ kind: 'refund', id: 're_2' }] };
    expect(signalEnvelopes('chain.live.block', block)).toEqual([{ target: { kind: 'refund', id: 're_2' }, event: { type: 'chain.block', id: 'blk:9:h9', at: 5, head: 9 } }]);
    const env = { target: { kind: 'payment_intent', id: 'pi_1' }, event: { type: 'chain.tx.included', id: 'inc:t1:h7', at: 1 } };
    expect(signalEnvelopes('chain.test.tx.included', env)).toEqual([env]);
  });

  it('a depth report naming one actor for two inclusions (a purchase’s two legs) is two events, not one and a duplicate', () => {
    const block = { head: 9, hash: 'h9', at: 5, pos: 40, targets: [{ kind: 'purchase', id: 'pi_x', inc: 31 }, { kind: 'purchase', id: 'pi_x', inc: 35 }] };
    const events = signalEnvelopes('chain.live.block', block).map((e) => e.event);
    expect(events.map((e) => e.inclusion)).toEqual([31, 35]);
    expect(new Set(events.map((e) => e.id)).size).toBe(2);
  });

  it('gives a re-mined block a new message id, and a re-published one the same', () => {
    expect(includedMsgId('test', signal, 0)).toBe(includedMsgId('test', { ...signal }, 0));
    expect(includedMsgId('test', signal, 0)).not.toBe(includedMsgId('test', { ...signal, block_hash: 'h7b' }, 0));
  });
});
