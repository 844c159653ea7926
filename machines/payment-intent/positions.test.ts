import { describe, expect, it } from 'vitest';
import { replay, step, type PersistedSnapshot } from '../kit/step.ts';
import { block, createEvent, ctxOf, included, MIN, reorged, seen, T0, webhooks } from '../../test/fixtures/payment-intent.ts';
import { paymentIntentDefinition as def } from './definition.ts';
import type { PaymentIntentEvent } from './events.ts';

/**
 * Positional chain signals (DESIGN §2 "Signals in any order", ADR 0016): each states what is
 * true at the indexer's position `pos`; older statements about the same tx are dropped.
 */
const at = (e: PaymentIntentEvent, pos: number, inclusion?: number): PaymentIntentEvent => ({ ...e, pos, ...(inclusion !== undefined && { inclusion }) }) as PaymentIntentEvent;
const T = T0 + MIN;
const paidAt4 = [createEvent(), at(included(T, { head: 100 }), 4), at(block(T, 111), 5, 4)];

function run(start: PersistedSnapshot, events: PaymentIntentEvent[]) {
  let snap = start;
  const out: Array<{ accepted: boolean; status: string; webhooks: string[] }> = [];
  for (const e of events) {
    const r = step(def, snap, e);
    out.push({ accepted: r.accepted, status: r.status, webhooks: webhooks(r) });
    snap = r.snapshot;
  }
  return { snap, out };
}

describe('payment intent, chain signals in any order', () => {
  it('issue 27: the re-mined inclusion overtakes the reorg of a PAID intent; it still settles', () => {
    const paid = replay(def, paidAt4);
    expect(def.status(paid as never)).toBe('PAID');
    const reInclusion = at(included(T, { head: 100, blockHash: 'blk100b' }), 20); // same height, new block
    const oldReorg = at(reorged(T, 'tx1', 111), 17);
    const { snap, out } = run(paid, [reInclusion, oldReorg, at(block(T, 111), 21, 20)]);
    expect(out[0]).toEqual({ accepted: true, status: 'CONFIRMING', webhooks: ['payment.reorged', 'payment.confirming'] });
    expect(out[1]).toMatchObject({ accepted: false, status: 'CONFIRMING' }); // older than what the intent knows
    expect(out[2]).toEqual({ accepted: true, status: 'PAID', webhooks: ['payment.confirmed'] });
    expect(ctxOf(snap).tx?.block_hash).toBe('blk100b');
  });

  it('a reorg that arrives before the inclusion it undoes is kept; the late inclusion is dropped', () => {
    const { snap, out } = run(replay(def, [createEvent()]), [at(reorged(T, 'tx1', 111), 17), at(included(T, { head: 111 }), 4)]);
    expect(out.map((o) => o.accepted)).toEqual([true, false]);
    expect(def.status(snap as never)).toBe('AWAITING_PAYMENT');
  });

  it('a depth report that overtakes its inclusion is kept and counted when the inclusion arrives', () => {
    const { snap, out } = run(replay(def, [createEvent(), at(seen(T), 2)]), [at(block(T, 111), 9, 4), at(included(T, { head: 100 }), 4)]);
    expect(out.map((o) => o.status)).toEqual(['PAYMENT_DETECTED', 'PAID']);
    expect(out[1]!.webhooks).toEqual(['payment.confirming', 'payment.confirmed']);
    expect(ctxOf(snap).confirmations).toBe(12);
  });

  it('a depth report about another inclusion does not deepen the known one', () => {
    const confirming = replay(def, [createEvent(), at(included(T, { head: 100 }), 4)]);
    const r = step(def, confirming, at(block(T, 140), 30, 25)); // the tx now sits in the block applied at 25
    expect(r.status).toBe('CONFIRMING');
    expect(ctxOf(r.snapshot).confirmations).toBe(1);
  });

  it('CI counterexample (seed 2045749370): the tx seen again after a reorg overtakes that reorg; the intent ends PAYMENT_DETECTED', () => {
    // Indexer order: seen@40, included@41, reorged@56, seen@70 (back in the mempool, never re-mined).
    const s40 = at(seen(T), 40);
    const i41 = at(included(T, { head: 100 }), 41);
    const r56 = at(reorged(T, 'tx1', 105), 56);
    const s70 = at(seen(T), 70);
    const inOrder = run(replay(def, [createEvent()]), [s40, i41, r56, s70]);
    expect(def.status(inOrder.snap as never)).toBe('PAYMENT_DETECTED');
    for (const order of [
      [i41, s40, s70, r56],
      [s40, s70, r56, i41],
      [s40, i41, s70, r56],
    ]) {
      const { snap } = run(replay(def, [createEvent()]), order);
      expect(def.status(snap as never)).toBe('PAYMENT_DETECTED');
      expect(ctxOf(snap).tx).toMatchObject({ hash: 'tx1', block_hash: null, block_height: null });
      expect(ctxOf(snap).confirmations).toBe(0);
    }
  });

  it('a settled tx seen in the mempool at a newer position lost its block: payment.reorged, then detected', () => {
    const { snap, out } = run(replay(def, paidAt4), [at(seen(T), 20), at(reorged(T, 'tx1', 111), 17)]);
    expect(out[0]).toEqual({ accepted: true, status: 'PAYMENT_DETECTED', webhooks: ['payment.reorged', 'payment.detected'] });
    expect(out[1]).toMatchObject({ accepted: false, status: 'PAYMENT_DETECTED' });
    expect(ctxOf(snap).tx?.block_hash).toBeNull();
  });

  it('signals without a position keep the rules they had', () => {
    const paid = replay(def, paidAt4);
    expect(step(def, paid, included(T, { head: 120, blockHash: 'blk100b' })).accepted).toBe(false);
    expect(step(def, paid, reorged(T)).status).toBe('AWAITING_PAYMENT');
  });
});
