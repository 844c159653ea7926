import { describe, expect, it } from 'vitest';
import { create, step, type StepResult } from '../kit/step.ts';
import { paymentIntentDefinition as def } from './definition.ts';
import type { PaymentIntentEvent } from './events.ts';
import { block, createEvent, included, MIN, reorged, seen, T0 } from '../../test/fixtures/payment-intent.ts';

/**
 * An intent made for another actor (an invoice, DESIGN §7 "Invoices") tells it, through the
 * outbox, when it settles and when a reorg reverses that settlement; an intent with no owner
 * sends nothing and its snapshot keeps the shape it always had.
 */
const OWNER = { kind: 'invoice', id: 'inv_owner' };

function run(events: PaymentIntentEvent[]): StepResult[] {
  const [first, ...rest] = events;
  const out: StepResult[] = [create(def, first!)];
  for (const e of rest) out.push(step(def, out.at(-1)!.snapshot, e));
  return out;
}
const toOwner = (r: StepResult) => r.effects.filter((f) => f.type === 'sendTo').map((f) => (f.type === 'sendTo' ? f.params : null));

describe('payment intent → owner notices', () => {
  it('sends intent.paid on settling and intent.reorged when the settlement is reversed, with positions', () => {
    const steps = run([
      createEvent({ owner: OWNER }),
      seen(T0 + MIN),
      included(T0 + 2 * MIN, { head: 100 }),
      { ...block(T0 + 5 * MIN, 111), pos: 40 },
      { ...reorged(T0 + 6 * MIN, 'tx1', 105), pos: 41 },
    ]);
    expect(steps.map((s) => s.status)).toEqual(['AWAITING_PAYMENT', 'PAYMENT_DETECTED', 'CONFIRMING', 'PAID', 'AWAITING_PAYMENT']);
    expect(toOwner(steps[3]!)).toMatchObject([{ kind: 'invoice', actorId: 'inv_owner', event: { type: 'intent.paid', intent_id: 'pay_test1', pos: 40 } }]);
    expect(toOwner(steps[4]!)).toMatchObject([{ kind: 'invoice', actorId: 'inv_owner', event: { type: 'intent.reorged', intent_id: 'pay_test1', pos: 41 } }]);
    expect(toOwner(steps[3]!)).toHaveLength(1);
    expect(toOwner(steps[4]!)).toHaveLength(1);
    // Before settlement nothing is sent.
    for (const s of steps.slice(0, 3)) expect(toOwner(s)).toEqual([]);
  });

  it('without an owner: no notice, and no owner field in the snapshot', () => {
    const steps = run([createEvent(), seen(T0 + MIN), included(T0 + 2 * MIN, { head: 100 }), block(T0 + 5 * MIN, 111)]);
    expect(steps.at(-1)!.status).toBe('PAID');
    expect('owner' in (steps[0]!.snapshot.context as object)).toBe(false);
    expect(steps.at(-1)!.effects.map((f) => f.type)).toEqual(['emitWebhook']);
  });
});
