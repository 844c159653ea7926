import fc from 'fast-check';
import { isDeepStrictEqual } from 'node:util';
import { describe, expect, it } from 'vitest';
import { isJsonPlain } from '../../machines/kit/json-plain.ts';

/** Values JSON keeps, and the ones it drops or changes, nested anywhere. */
const odd = fc.constantFrom<unknown>(undefined, Number.NaN, Infinity, -0, new Date(0), () => 1, Symbol('s'), new Map(), Object.create(null), new Array(2));
const value = fc.letrec<{ v: unknown }>((tie) => ({
  v: fc.oneof({ depthSize: 'small' }, fc.jsonValue({ maxDepth: 1 }), odd, fc.array(tie('v'), { maxLength: 4 }), fc.dictionary(fc.string(), tie('v'), { maxKeys: 4 })),
})).v;

describe('isJsonPlain', () => {
  it('holds only for what JSON gives back unchanged', () => {
    fc.assert(
      fc.property(value, (v) => {
        if (isJsonPlain(v)) expect(isDeepStrictEqual(JSON.parse(JSON.stringify(v)), v)).toBe(true);
      }),
      { numRuns: 2_000 },
    );
  });

  it('holds for what JSON gives back', () => {
    fc.assert(fc.property(fc.jsonValue(), (v) => isJsonPlain(JSON.parse(JSON.stringify(v)))));
  });

  it('refuses what a walk of values alone would miss', () => {
    const hidden = { a: 1 };
    Object.defineProperty(hidden, 'b', { value: 2, enumerable: false });
    expect(isJsonPlain(hidden)).toBe(false);
    expect(isJsonPlain({ a: 1, [Symbol('s')]: 2 })).toBe(false);
    const arr = Object.assign([1, 2], { extra: 3 });
    expect(isJsonPlain(arr)).toBe(false);
    expect(isJsonPlain({ a: [1, { b: 'x', c: null, d: true }] })).toBe(true);
    expect(isJsonPlain({ a: { b: undefined } })).toBe(false);
  });
});
