/**
 * The execute route's body (ADR 0099): what it recognises without the schema, the schema
 * accepts, with the same values; whatever the schema refuses goes to it for its message.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { executeBody, executeInput, plainExecuteBody } from './execute-body.ts';

const any = fc.oneof(fc.constant(null), fc.integer(), fc.string({ maxLength: 4 }), fc.constant([]), fc.constant({}), fc.dictionary(fc.string({ maxLength: 3 }), fc.integer(), { maxKeys: 2 }));
/** Mostly what a caller sends, sometimes anything: each field alone decides many refusals. */
const mostly = <T>(good: fc.Arbitrary<T>) => fc.oneof({ arbitrary: good, weight: 5 }, { arbitrary: any, weight: 1 });
/** Now and then: a field the schema does not know. */
const rarely = <T>(a: fc.Arbitrary<T>) => fc.oneof({ arbitrary: fc.constant(undefined), weight: 8 }, { arbitrary: a, weight: 1 });
const maybe = <T>(a: fc.Arbitrary<T>) => fc.option(a, { nil: undefined, freq: 4 });
const keyed = (o: Record<string, unknown>) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));
const ID = 'pi_0abc';
const id = fc.oneof({ arbitrary: fc.constant(ID), weight: 6 }, { arbitrary: fc.constantFrom('', 'x'.repeat(100), 'x'.repeat(101), 'pi_1'), weight: 1 });
const legs = mostly(fc.record({ fee: maybe(any), seller: maybe(any), extra: rarely(any) }).map(keyed));
const feePayment = mostly(fc.record({ intent_id: maybe(id), legs: maybe(legs), other: rarely(any) }).map(keyed));
const bodyField = mostly(fc.oneof(fc.constant(JSON.parse('{"__proto__":{"a":1},"b":2}') as unknown), fc.dictionary(fc.string({ maxLength: 4 }), any, { maxKeys: 3 })));
const sellerPayment = fc.oneof({ arbitrary: fc.constant('eyJ4'), weight: 6 }, { arbitrary: fc.constantFrom('', 'a'.repeat(16_384), 'a'.repeat(16_385)), weight: 1 }, { arbitrary: any, weight: 1 });
const doc = fc.oneof(
  { arbitrary: any, weight: 1 },
  {
    arbitrary: fc.record({ intent_id: maybe(mostly(id)), fee_payment: maybe(feePayment), seller_payment: maybe(sellerPayment), body: maybe(bodyField), other: rarely(any) }).map(keyed),
    weight: 8,
  },
);

describe('execute body', () => {
  it('recognised without the schema only when the schema accepts it, with the same values; refused ones keep the schema message', () => {
    let [runs, recognised] = [0, 0];
    fc.assert(
      fc.property(doc, (raw) => {
        runs++;
        // As the route gets it: a document parsed from JSON text.
        const v: unknown = JSON.parse(JSON.stringify(raw));
        const plain = plainExecuteBody(v);
        const r = executeBody.safeParse(v);
        if (plain) {
          recognised++;
          expect(r.success).toBe(true);
          expect(JSON.stringify(plain)).toBe(JSON.stringify(r.data));
          expect(plain).toEqual(r.data);
        }
        if (!r.success) expect(() => executeInput(v)).toThrow(r.error.issues[0]!.message);
      }),
      { numRuns: 3_000 },
    );
    // Enough of each kind for the property to mean something.
    expect(recognised / runs).toBeGreaterThan(0.1);
    expect(recognised / runs).toBeLessThan(0.9);
  });

  it('the body every caller sends is recognised; a body naming __proto__ goes to the schema', () => {
    const sent = { intent_id: 'pi_0abc', fee_payment: { intent_id: 'pi_0abc', legs: { fee: { x402Version: 2 }, seller: 'eyJ4' } }, seller_payment: 'eyJ4', body: { q: 1 } };
    expect(plainExecuteBody(JSON.parse(JSON.stringify(sent)))).toEqual(sent);
    expect(plainExecuteBody(JSON.parse('{"intent_id":"pi_1","seller_payment":"e","body":{"__proto__":{}}}'))).toBeNull();
    expect(() => executeInput({ intent_id: 'pi_1', seller_payment: 'e', fee_payment: { intent_id: 'pi_2' } })).toThrow('fee_payment.intent_id: names another intent than intent_id');
  });
});
