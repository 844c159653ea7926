import { describe, expect, it } from 'vitest';
import { replay, restore } from '../kit/step.ts';
import { createEvent, ctxOf, pathTo } from '../../test/fixtures/payment-intent.ts';
import { initialContext } from './context.ts';
import { paymentIntentDefinition as def } from './definition.ts';
import { toResource, webhookData } from './view.ts';

// Spec "PaymentIntent" table, in its order.
const RESOURCE_FIELDS = [
  'object', 'id', 'status', 'mode', 'currency', 'requested_amount', 'anm_amount', 'anm_amount_formatted', 'merchant_amount',
  'protocol_fee', 'protocol_fee_bps', 'merchant_order_id', 'description', 'payment_address', 'payment_reference', 'checkout_url',
  'transaction_hash', 'confirmations', 'required_confirmations', 'metadata', 'created_at', 'expires_at', 'completed_at',
];
// Spec "Payment event data" table, plus metadata echoed on every webhook.
const EVENT_FIELDS = [
  'id', 'status', 'mode', 'currency', 'merchant_order_id', 'amount_nanm', 'merchant_amount', 'protocol_fee', 'protocol_fee_bps',
  'payment_reference', 'transaction_hash', 'block_height', 'confirmations', 'required_confirmations', 'reason', 'metadata',
];

describe('toResource (spec: PaymentIntent)', () => {
  it('a new intent renders every field of the spec, amounts as strings', () => {
    const ctx = initialContext(createEvent({ anm_amount: '1234500000000' }));
    const r = toResource(ctx, 'AWAITING_PAYMENT', { baseUrl: 'https://pay.example/' });
    expect(Object.keys(r)).toEqual(RESOURCE_FIELDS);
    expect(r).toEqual({
      object: 'payment_intent',
      id: 'pay_test1',
      status: 'AWAITING_PAYMENT',
      mode: 'live',
      currency: 'ANM',
      requested_amount: '1',
      anm_amount: '1234500000000',
      anm_amount_formatted: '1,234.5 ANM',
      merchant_amount: '1209810000000',
      protocol_fee: '24690000000',
      protocol_fee_bps: 200,
      merchant_order_id: 'order-42',
      description: 'A thing',
      payment_address: 'anm1merchant',
      payment_reference: 'pr1:abcdefghijklmnopqrstuvwxyz234567',
      checkout_url: 'https://pay.example/c/pay_test1',
      transaction_hash: null,
      confirmations: 0,
      required_confirmations: 12,
      metadata: { order: 42 },
      created_at: '2026-01-01T00:00:00.000Z',
      expires_at: '2026-01-01T00:30:00.000Z',
      completed_at: null,
    });
  });

  it('a paid intent carries its transaction, depth and completion time', () => {
    const snap = replay(def, pathTo('PAID'));
    const r = toResource(ctxOf(snap), def.status(restore(def, snap)), { baseUrl: 'https://pay.example' });
    expect(r).toMatchObject({ status: 'PAID', transaction_hash: 'tx1', confirmations: 12, completed_at: '2026-01-01T00:05:00.000Z' });
    expect(BigInt(r.merchant_amount) + BigInt(r.protocol_fee)).toBe(BigInt(r.anm_amount));
  });
});

describe('webhookData (spec: Payment event data)', () => {
  it('has exactly the spec fields plus metadata', () => {
    const ctx = ctxOf(replay(def, pathTo('CONFIRMING')));
    const d = webhookData(ctx, 'CONFIRMING', {});
    expect(Object.keys(d)).toEqual(EVENT_FIELDS);
    expect(d).toMatchObject({ amount_nanm: '1000000000', transaction_hash: 'tx1', block_height: 100, confirmations: 2, reason: null, protocol_fee_bps: 200 });
    expect(webhookData(ctx, 'UNDERPAID', { reason: 'x' }).reason).toBe('x');
  });

  it('is JSON-safe (no bigint)', () => {
    const ctx = ctxOf(replay(def, pathTo('PAID')));
    expect(JSON.parse(JSON.stringify(webhookData(ctx, 'PAID')))).toEqual(webhookData(ctx, 'PAID'));
  });
});
