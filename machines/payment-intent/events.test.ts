import { describe, expect, it } from 'vitest';
import { createEvent, included, T0 } from '../../test/fixtures/payment-intent.ts';
import { paymentIntentDefinition as def } from './definition.ts';
import { paymentIntentEvents } from './events.ts';

describe('payment intent event schemas', () => {
  it('intent.create fills the documented defaults', () => {
    const { merchant_order_id: _o, description: _d, metadata: _m, success_url: _s, cancel_url: _c, required_confirmations: _r, monitor_window_ms: _w, quote: _q, ...minimal } = createEvent();
    const parsed = paymentIntentEvents.parse(minimal);
    expect(parsed).toMatchObject({
      merchant_order_id: null,
      description: null,
      metadata: {},
      success_url: null,
      cancel_url: null,
      required_confirmations: 12,
      monitor_window_ms: 86_400_000,
      quote: null,
    });
  });

  it('every event needs a non-empty id and an integer Unix-ms at', () => {
    expect(paymentIntentEvents.safeParse({ type: 'intent.cancel', id: '', at: T0 }).success).toBe(false);
    expect(paymentIntentEvents.safeParse({ type: 'intent.cancel', id: 'x', at: 1.5 }).success).toBe(false);
    expect(paymentIntentEvents.safeParse({ type: 'intent.cancel', id: 'x', at: T0 }).success).toBe(true);
  });

  it('amounts are nANM strings (spec rule 2): numbers, decimals and zero charges are refused', () => {
    expect(paymentIntentEvents.safeParse({ ...createEvent(), anm_amount: 1000 }).success).toBe(false);
    expect(paymentIntentEvents.safeParse({ ...createEvent(), anm_amount: '1.5' }).success).toBe(false);
    expect(paymentIntentEvents.safeParse({ ...createEvent(), anm_amount: '000' }).success).toBe(false);
    expect(paymentIntentEvents.safeParse({ ...included(T0), merchant_leg: -1 }).success).toBe(false);
  });

  it('unknown event types are refused before they reach the machine', () => {
    expect(def.events.safeParse({ type: 'intent.pay', id: 'x', at: T0 }).success).toBe(false);
  });
});
