import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeReference, isPaymentReference, isRefundReference, paymentReference, refundReference } from './reference.ts';

const ref20 = fc.uint8Array({ minLength: 20, maxLength: 20 });

describe('references (DESIGN §3: pr1:/rf1: + lowercase unpadded base32 of 20 bytes)', () => {
  it('encodes 20 bytes as 32 lowercase base32 characters', () => {
    expect(paymentReference(new Uint8Array(20))).toBe('pr1:' + 'a'.repeat(32));
    expect(refundReference(new Uint8Array(20).fill(0xff))).toBe('rf1:' + '7'.repeat(32));
  });

  it('round-trips and classifies', () => {
    fc.assert(
      fc.property(ref20, (b) => {
        const p = paymentReference(b);
        const r = refundReference(b);
        expect(p).toMatch(/^pr1:[a-z2-7]{32}$/);
        expect([isPaymentReference(p), isRefundReference(p), isPaymentReference(r), isRefundReference(r)]).toEqual([true, false, false, true]);
        expect(decodeReference(p)).toEqual({ kind: 'payment', bytes: b });
        expect(decodeReference(r)).toEqual({ kind: 'refund', bytes: b });
      }),
    );
  });

  it('refuses other lengths, cases, alphabets and prefixes', () => {
    expect(() => paymentReference(new Uint8Array(19))).toThrow(RangeError);
    expect(() => refundReference(new Uint8Array(21))).toThrow(RangeError);
    const p = paymentReference(new Uint8Array(20).fill(9));
    for (const bad of [p.toUpperCase(), p + '=', p.slice(0, -1), p.replace('pr1', 'pr2'), p.slice(0, -1) + '1', `pr1:${'a'.repeat(33)}`, 7, null]) {
      expect(isPaymentReference(bad)).toBe(false);
      expect(decodeReference(bad)).toBeUndefined();
    }
  });
});
