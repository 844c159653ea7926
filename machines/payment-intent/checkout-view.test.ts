import { describe, expect, it } from 'vitest';
import { ANM, MIN, T0, block, createEvent, ctxOf, included, pathTo, reorged, seen } from '../../test/fixtures/payment-intent.ts';
import type { PersistedSnapshot } from '../kit/step.ts';
import { checkoutChanged, checkoutFinalAt, isCheckoutFinal, safeHttpUrl, toCheckoutPage, toCheckoutStatus } from './checkout-view.ts';
import { paymentIntentDefinition } from './definition.ts';
import { paymentUri } from './payment-uri.ts';
import type { PaymentIntentEvent } from './events.ts';
import { create, step, type StepResult } from '../kit/step.ts';

function run(events: PaymentIntentEvent[]): { snapshot: PersistedSnapshot; status: string } {
  const [first, ...rest] = events;
  let r: StepResult = create(paymentIntentDefinition, first!);
  for (const e of rest) r = step(paymentIntentDefinition, r.snapshot, e);
  return { snapshot: r.snapshot, status: r.status };
}

const at = (status: string) => {
  const r = run(pathTo(status));
  return { ctx: ctxOf(r.snapshot), status: r.status };
};

describe('checkout view (docs/checkout.md)', () => {
  it('the page data carries the payment URI (payment-uri.ts) and both legs', () => {
    const { ctx } = at('AWAITING_PAYMENT');
    const page = toCheckoutPage(ctx, 'AWAITING_PAYMENT', { version: 1, merchantName: 'Shop', now: T0 });
    expect(page.intent.payment_uri).toBe(paymentUri(ctx));
    expect(page.intent.anm_amount).toBe(ANM.toString());
    expect(BigInt(page.intent.merchant_amount) + BigInt(page.intent.protocol_fee)).toBe(ANM);
    expect(page.intent.anm_amount_decimal).toBe('1');
    expect(toCheckoutPage({ ...ctx, anm_amount: '1234500000000' }, 'AWAITING_PAYMENT', { version: 1, merchantName: 'Shop', now: T0 }).intent.anm_amount_decimal).toBe('1234.5');
    expect(page.intent.merchant_amount_formatted).toBe('0.98 ANM');
    expect(page.intent.protocol_fee_formatted).toBe('0.02 ANM');
  });

  it('success_url only while PAID (spec rule 7), never a non-http link', () => {
    for (const status of ['AWAITING_PAYMENT', 'PAYMENT_DETECTED', 'CONFIRMING', 'OVERPAID', 'UNDERPAID', 'FAILED', 'EXPIRED', 'PAID', 'REFUNDED', 'PARTIALLY_REFUNDED']) {
      const { ctx, status: s } = at(status);
      expect(s).toBe(status);
      const v = toCheckoutStatus({ ...ctx, success_url: 'https://shop.example/thanks' }, s, { version: 1, now: T0 });
      expect(v.success_url, status).toBe(status === 'PAID' ? 'https://shop.example/thanks' : null);
    }
    const paid = at('PAID');
    expect(toCheckoutStatus({ ...paid.ctx, success_url: 'javascript:alert(1)' }, 'PAID', { version: 1, now: T0 }).success_url).toBeNull();
    expect(safeHttpUrl('data:text/html,x')).toBeNull();
    expect(safeHttpUrl('http://shop.example/a?b')).toBe('http://shop.example/a?b');
  });

  it('final for the page: settled at once, underpaid once deep, expired/failed after the late-payment watch', () => {
    expect(checkoutFinalAt(at('PAID').ctx, 'PAID')).toBe(0);
    expect(checkoutFinalAt(at('REFUNDED').ctx, 'REFUNDED')).toBe(0);
    expect(checkoutFinalAt(at('PARTIALLY_REFUNDED').ctx, 'PARTIALLY_REFUNDED')).toBe(0);
    for (const s of ['AWAITING_PAYMENT', 'PAYMENT_DETECTED', 'CONFIRMING', 'OVERPAID']) expect(checkoutFinalAt(at(s).ctx, s), s).toBeNull();

    const under = at('UNDERPAID');
    expect(checkoutFinalAt(under.ctx, 'UNDERPAID')).toBeNull();
    const deep = run([...pathTo('UNDERPAID'), included(T0 + 2 * MIN, { legs: 'short', height: 100, head: 100 }), block(T0 + 3 * MIN, 111)]);
    expect(deep.status).toBe('UNDERPAID');
    expect(ctxOf(deep.snapshot).confirmations).toBe(12);
    expect(checkoutFinalAt(ctxOf(deep.snapshot), 'UNDERPAID')).toBe(0);

    const expired = at('EXPIRED');
    const watchEnd = checkoutFinalAt(expired.ctx, 'EXPIRED')!;
    expect(watchEnd).toBe(T0 + 30 * MIN + 24 * 60 * MIN);
    expect(isCheckoutFinal(expired.ctx, 'EXPIRED', watchEnd - 1)).toBe(false);
    expect(isCheckoutFinal(expired.ctx, 'EXPIRED', watchEnd)).toBe(true);
  });

  it('payable only while a payment sent now can satisfy the intent', () => {
    expect(toCheckoutStatus(at('AWAITING_PAYMENT').ctx, 'AWAITING_PAYMENT', { version: 1, now: T0 }).payable).toBe(true);
    const failed = at('FAILED');
    expect(toCheckoutStatus(failed.ctx, 'FAILED', { version: 1, now: T0 }).payable).toBe(true);
    expect(toCheckoutStatus(failed.ctx, 'FAILED', { version: 1, now: T0 + 48 * 60 * MIN }).payable).toBe(false);
    for (const s of ['PAYMENT_DETECTED', 'CONFIRMING', 'PAID', 'EXPIRED', 'UNDERPAID']) expect(toCheckoutStatus(at(s).ctx, s, { version: 1, now: T0 }).payable, s).toBe(false);
  });

  it('underpaid carries the shortfall, overpaid the excess', () => {
    const u = at('UNDERPAID');
    const v = toCheckoutStatus(u.ctx, 'UNDERPAID', { version: 2, now: T0 });
    expect(v.shortfall).toBe('1');
    expect(v.shortfall_formatted).toBe('0.000000001 ANM');
    const o = at('OVERPAID');
    const w = toCheckoutStatus(o.ctx, 'OVERPAID', { version: 2, now: T0 });
    expect(w.excess).toBe('100000000');
    expect(w.excess_formatted).toBe('0.1 ANM');
  });

  it('a reorg back to AWAITING_PAYMENT carries the notice; changes are status, depth, tx, deadline, finality', () => {
    const r = run([...pathTo('CONFIRMING'), reorged(T0 + 3 * MIN, 'tx1', 100)]);
    expect(r.status).toBe('AWAITING_PAYMENT');
    const v = toCheckoutStatus(ctxOf(r.snapshot), r.status, { version: 4, event: 'chain.reorged', now: T0 });
    expect(v.notice).toBe('reorged');
    expect(toCheckoutStatus(ctxOf(r.snapshot), r.status, { version: 4, now: T0 }).notice).toBeNull();

    const a = toCheckoutStatus(at('CONFIRMING').ctx, 'CONFIRMING', { version: 3, now: T0 });
    expect(checkoutChanged(a, { ...a, version: 4 })).toBe(false);
    expect(checkoutChanged(a, { ...a, version: 4, confirmations: a.confirmations + 1 })).toBe(true);
    expect(checkoutChanged(null, a)).toBe(true);
  });

  it('the create event fixture and a seen transaction render', () => {
    const r = run([createEvent({ description: '<script>x</script>' }), seen(T0 + MIN)]);
    const page = toCheckoutPage(ctxOf(r.snapshot), r.status, { version: 2, merchantName: 'M', now: T0 });
    expect(page.intent.description).toBe('<script>x</script>');
    expect(page.status.status).toBe('PAYMENT_DETECTED');
    expect(page.status.transaction_hash).toBe('tx1');
  });
});
