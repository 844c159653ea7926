import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { create, step, type StepResult } from '../kit/step.ts';
import { paymentIntentDefinition as def } from './definition.ts';
import type { PaymentIntentEvent } from './events.ts';
import { ctxOf, MERCHANT, MIN, pathTo, reorged, reserve, T0 } from '../../test/fixtures/payment-intent.ts';

/**
 * A confirmed refund whose transfer a deep reorg took back (ADR 0033). The refund actor sends
 * numbered outcomes (`refund.confirmed`, `refund.reverted`, `refund.released`); the intent
 * keeps the newest per refund whatever the order they arrive in, counts a refund exactly
 * when its newest outcome is a confirmation, and its settled status follows (DESIGN §4:
 * PARTIALLY_REFUNDED / REFUNDED by the sum of the refunds on record, PAID with none).
 */
const T = T0 + 60 * MIN;
const HALF = '490000000';
type Outcome = 'refund.confirmed' | 'refund.reverted' | 'refund.released';
const outcome = (type: Outcome, refundId: string, amount: string, seq: number | undefined): PaymentIntentEvent =>
  ({ type, id: `${type}:${refundId}:${seq ?? '-'}`, at: T + (seq ?? 1), refund_id: refundId, amount, ...(seq !== undefined && { seq }) }) as PaymentIntentEvent;
const confirmed = (id: string, amount: string, seq?: number) => outcome('refund.confirmed', id, amount, seq);
const reverted = (id: string, amount: string, seq: number) => outcome('refund.reverted', id, amount, seq);
const released = (id: string, amount: string, seq?: number) => outcome('refund.released', id, amount, seq);

function run(events: PaymentIntentEvent[]): StepResult {
  const [first, ...rest] = events;
  let r: StepResult = create(def, first!);
  for (const e of rest) r = step(def, r.snapshot, e);
  return r;
}
const books = (r: StepResult) => {
  const c = ctxOf(r.snapshot);
  return { status: r.status, refunds: c.refunds.map((x) => `${x.refund_id}:${x.amount}`), holds: (c.refund_holds ?? []).map((x) => `${x.refund_id}:${x.amount}`) };
};
const paidWith = (...reserves: Array<[string, string]>) => [...pathTo('PAID'), ...reserves.map(([id, a]) => reserve(id, a))];

describe('a confirmed refund reorged out (ADR 0033)', () => {
  it('REFUNDED → PAID when its only refund is reverted; held again; REFUNDED once re-confirmed', () => {
    const base = paidWith(['re_a', MERCHANT]);
    expect(books(run([...base, confirmed('re_a', MERCHANT, 1)]))).toEqual({ status: 'REFUNDED', refunds: [`re_a:${MERCHANT}`], holds: [] });
    const back = run([...base, confirmed('re_a', MERCHANT, 1), reverted('re_a', MERCHANT, 2)]);
    expect(books(back)).toEqual({ status: 'PAID', refunds: [], holds: [`re_a:${MERCHANT}`] });
    expect(back.effects.filter((f) => f.type === 'emitWebhook')).toEqual([]);
    expect(books(run([...base, confirmed('re_a', MERCHANT, 1), reverted('re_a', MERCHANT, 2), confirmed('re_a', MERCHANT, 3)])).status).toBe('REFUNDED');
  });

  it('REFUNDED → PARTIALLY_REFUNDED when one of two refunds is reverted', () => {
    const half2 = String(BigInt(MERCHANT) - BigInt(HALF));
    const r = run([...paidWith(['re_a', HALF], ['re_b', half2]), confirmed('re_a', HALF, 1), confirmed('re_b', half2, 1), reverted('re_b', half2, 2)]);
    expect(books(r)).toEqual({ status: 'PARTIALLY_REFUNDED', refunds: [`re_a:${HALF}`], holds: [`re_b:${half2}`] });
  });

  it('a dropped and then canceled refund is un-counted and its hold freed, once', () => {
    const r = run([...paidWith(['re_a', HALF]), confirmed('re_a', HALF, 1), reverted('re_a', HALF, 2), released('re_a', HALF, 3)]);
    expect(books(r)).toEqual({ status: 'PAID', refunds: [], holds: [] });
    // The release overtook the reversal: applied, and the reversal is then stale.
    const early = run([...paidWith(['re_a', HALF]), confirmed('re_a', HALF, 1), released('re_a', HALF, 3)]);
    expect(books(early)).toEqual({ status: 'PAID', refunds: [], holds: [] });
    expect(step(def, early.snapshot, reverted('re_a', HALF, 2)).accepted).toBe(false);
  });

  it('a reversal that overtakes its confirmation makes the confirmation stale', () => {
    const r = run([...paidWith(['re_a', HALF]), reverted('re_a', HALF, 2)]);
    expect(books(r)).toEqual({ status: 'PAID', refunds: [], holds: [`re_a:${HALF}`] });
    expect(step(def, r.snapshot, confirmed('re_a', HALF, 1)).accepted).toBe(false);
  });

  it('a refund counted before numbering (no seq) is un-counted by its first numbered reversal; its redelivery is stale after', () => {
    const r = run([...paidWith(['re_a', HALF]), confirmed('re_a', HALF), reverted('re_a', HALF, 2)]);
    expect(books(r)).toEqual({ status: 'PAID', refunds: [], holds: [`re_a:${HALF}`] });
    expect(step(def, r.snapshot, confirmed('re_a', HALF)).accepted).toBe(false);
  });

  it('a reversal reaching a reorged intent un-counts the refund there too; settling again lands on PAID', () => {
    const r = run([...paidWith(['re_a', HALF]), confirmed('re_a', HALF, 1), reorged(T + 1, 'tx1', 105), reverted('re_a', HALF, 2)]);
    expect(books(r)).toEqual({ status: 'AWAITING_PAYMENT', refunds: [], holds: [`re_a:${HALF}`] });
  });

  /** The outcomes one refund sent, in its own order: confirmations and reversals alternate, and a release may end them. */
  const historyArb = fc
    .tuple(fc.integer({ min: 1, max: 6 }), fc.boolean())
    .map(([n, release]) => {
      const out: PaymentIntentEvent[] = [];
      for (let seq = 1; seq <= n; seq++) out.push(seq % 2 === 1 ? confirmed('re_a', HALF, seq) : reverted('re_a', HALF, seq));
      if (release && n % 2 === 0) out.push(released('re_a', HALF, n + 1));
      return out;
    });

  it('any order with redeliveries ends where the newest outcome says (property)', () => {
    fc.assert(
      fc.property(
        historyArb.chain((h) => fc.tuple(fc.constant(h), fc.shuffledSubarray([...h, ...h], { minLength: 2 * h.length }))),
        ([history, delivered]) => {
          const base = paidWith(['re_a', HALF]);
          const inOrder = books(run([...base, ...history]));
          const last = history.at(-1)!.type;
          expect(inOrder.status).toBe(last === 'refund.confirmed' ? 'PARTIALLY_REFUNDED' : 'PAID');
          expect(inOrder.refunds).toEqual(last === 'refund.confirmed' ? [`re_a:${HALF}`] : []);
          expect(inOrder.holds).toEqual(last === 'refund.reverted' ? [`re_a:${HALF}`] : []);
          expect(books(run([...base, ...delivered]))).toEqual(inOrder);
        },
      ),
      { numRuns: 300, examples: [[[[confirmed('re_a', HALF, 1), reverted('re_a', HALF, 2)], [reverted('re_a', HALF, 2), confirmed('re_a', HALF, 1), confirmed('re_a', HALF, 1), reverted('re_a', HALF, 2)]]]] },
    );
  });
});
