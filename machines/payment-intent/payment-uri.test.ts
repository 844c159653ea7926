/** The payment URI (docs/checkout.md "Payment URI", ADR 0014). */
import { describe, expect, it } from 'vitest';
import { ANM, FEE as FEE_S, MERCHANT as MERCHANT_S } from '../../test/fixtures/payment-intent.ts';
import { PaymentUriError, parsePaymentUri, paymentUri } from './payment-uri.ts';

const MERCHANT = BigInt(MERCHANT_S);
const FEE = BigInt(FEE_S);
const intent = {
  payment_address: 'anm1merchant',
  merchant_amount: MERCHANT.toString(),
  protocol_fee: FEE.toString(),
  treasury_address: 'anm1treasury',
  payment_reference: 'pr1:abcdefghijklmnopqrstuvwxyz234567',
};
const REF = 'ref=pr1:abcdefghijklmnopqrstuvwxyz234567';

describe('payment URI', () => {
  it('anm:<payment_address>?amount=<total>&merchant_amount=<m>&fee_amount=<f>&fee_to=<treasury>&ref=<reference>', () => {
    expect(paymentUri(intent)).toBe(`anm:anm1merchant?amount=${ANM}&merchant_amount=${MERCHANT}&fee_amount=${FEE}&fee_to=anm1treasury&${REF}`);
  });

  it('a wallet that reads only the address and amount= sends the whole charge, not the merchant leg alone', () => {
    const naive = new URL(paymentUri(intent)).searchParams.get('amount');
    expect(BigInt(naive!)).toBe(MERCHANT + FEE);
    expect(BigInt(naive!)).toBeGreaterThan(MERCHANT);
  });

  it('round-trips: a wallet reading the legs by name builds the two outputs of the intent', () => {
    expect(parsePaymentUri(paymentUri(intent))).toEqual({
      payment_address: 'anm1merchant',
      amount: ANM,
      merchant_amount: MERCHANT,
      protocol_fee: FEE,
      treasury_address: 'anm1treasury',
      payment_reference: intent.payment_reference,
    });
  });

  it.each([
    ['legs that do not add up to amount', `anm:a?amount=${ANM + 1n}&merchant_amount=${MERCHANT}&fee_amount=${FEE}&fee_to=t&${REF}`, /do not add up/],
    ['the former format (amount = merchant leg, fee=)', `anm:a?amount=${MERCHANT}&fee=${FEE}&fee_to=t&${REF}`, /merchant_amount is missing/],
    ['a missing fee_to', `anm:a?amount=${ANM}&merchant_amount=${MERCHANT}&fee_amount=${FEE}&${REF}`, /fee_to is missing/],
    ['a repeated parameter', `anm:a?amount=${ANM}&amount=${ANM}&merchant_amount=${MERCHANT}&fee_amount=${FEE}&fee_to=t&${REF}`, /appears twice/],
    ['a decimal amount', `anm:a?amount=1.0&merchant_amount=${MERCHANT}&fee_amount=${FEE}&fee_to=t&${REF}`, /whole number of nANM/],
    ['another scheme', `bitcoin:a?amount=${ANM}`, /not an anm: payment URI/],
  ])('refuses %s', (_what, uri, message) => {
    expect(() => parsePaymentUri(uri)).toThrow(PaymentUriError);
    expect(() => parsePaymentUri(uri)).toThrow(message);
  });
});
