import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { create, replay, restore, type PersistedSnapshot } from '../../machines/kit/step.ts';
import { stepChecked } from './step-checked.ts';
import { refundDefinition } from '../../machines/refund/definition.ts';
import type { RefundContext } from '../../machines/refund/context.ts';

/**
 * Model-based suite for the refund machine: random sequences of signatures, chain signals,
 * timers and cancels. Invariants: CONFIRMED only with a successful inclusion at >= 12
 * confirmations; the intent hears `refund.confirmed` at most once and never together with
 * `refund.released`; terminal states accept nothing; snapshots survive JSON; replay equals the
 * step-by-step snapshot.
 */
const T = 1_800_000_000_000;
const AMOUNT = '500';
const TERMINAL = new Set(['CONFIRMED', 'FAILED', 'CANCELED']);

type Ev = Record<string, unknown> & { type: string; id: string; at: number };
const evArb = (n: number): fc.Arbitrary<Ev> => {
  const id = `e${n}`;
  const legs = fc.record({ tx_hash: fc.constantFrom('tx1', 'tx2'), from: fc.constant('anm1m'), merchant_leg: fc.constantFrom(AMOUNT, '499', '600'), fee_leg: fc.constant('0') });
  return fc.oneof(
    fc.record({ tx_hash: fc.constantFrom('tx1', 'tx2') }).map((x) => ({ type: 'refund.submitted', id, at: T + n, ...x })),
    legs.map((l) => ({ type: 'chain.tx.seen', id, at: T + n, ...l })),
    fc
      .tuple(legs, fc.integer({ min: 10, max: 30 }), fc.constantFrom('success', 'success', 'failed'))
      .map(([l, head, receipt]) => ({ type: 'chain.tx.included', id, at: T + n, ...l, block_height: 10, block_hash: `b${n}`, receipt, head })),
    fc.integer({ min: 10, max: 40 }).map((head) => ({ type: 'chain.block', id, at: T + n, head })),
    fc.constantFrom('tx1', 'tx2').map((tx) => ({ type: 'chain.reorged', id, at: T + n, tx_hash: tx, head: 12 })),
    fc.constantFrom('tx1', 'tx2').map((tx) => ({ type: 'chain.tx.dropped', id, at: T + n, tx_hash: tx })),
    fc.constant({ type: 'refund.cancel', id, at: T + n }),
    fc.constant({ type: 'timer.expired', id, at: T + n, timer: 'unsigned', generation: 1 }),
  );
};
const sequence = fc.integer({ min: 1, max: 30 }).chain((len) => fc.tuple(...Array.from({ length: len }, (_, i) => evArb(i))));

const createEv = {
  type: 'refund.create', id: 'c', at: T, refund_id: 're_1', payment_intent: 'pay_1', merchant_id: 'm', mode: 'live', amount: AMOUNT,
  chain_id: 1, from: 'anm1m', to: 'anm1c', reference: 'rf1:abcd',
};

describe('refund machine, model-based', () => {
  it('keeps its invariants over random event sequences', () => {
    fc.assert(
      fc.property(sequence, (events) => {
        const first = create(refundDefinition, refundDefinition.events.parse(createEv));
        let snap: PersistedSnapshot = first.snapshot;
        let status = first.status;
        const accepted: unknown[] = [refundDefinition.events.parse(createEv)];
        const toIntent: string[] = [];
        for (const raw of events) {
          const e = refundDefinition.events.parse(raw);
          const r = stepChecked(refundDefinition, snap, e);
          if (TERMINAL.has(status)) expect(r.accepted, `${status} accepted ${e.type}`).toBe(false);
          if (r.accepted) accepted.push(e);
          for (const fx of r.effects) if (fx.type === 'sendTo') toIntent.push((fx.params.event as { type: string }).type);
          if (r.status === 'CONFIRMED' && status !== 'CONFIRMED') {
            const c = r.snapshot.context as RefundContext;
            expect(c.confirmations).toBeGreaterThanOrEqual(12);
            expect(c.tx_hash).not.toBeNull();
          }
          snap = JSON.parse(JSON.stringify(r.snapshot)) as PersistedSnapshot;
          expect(String(restore(refundDefinition, snap).value)).toBe(r.status);
          status = r.status;
        }
        expect(toIntent.filter((t) => t === 'refund.confirmed').length).toBeLessThanOrEqual(1);
        expect(toIntent.length).toBeLessThanOrEqual(1); // confirmed XOR released, once
        expect(replay(refundDefinition, accepted as never)).toEqual(snap);
      }),
      { numRuns: 1500 },
    );
  });
});
