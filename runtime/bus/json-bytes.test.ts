import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { jsonBytes } from './json-bytes.ts';

const decode = (b: Uint8Array): unknown => JSON.parse(Buffer.from(b).toString('utf8'));

describe('jsonBytes', () => {
  it('decodes to what JSON.stringify gives, for any JSON value and for messages with long arrays', () => {
    const value = fc.jsonValue();
    const message = fc.record({ head: fc.nat(), hash: fc.string(), txs: fc.array(value, { minLength: 0, maxLength: 300 }), more: fc.array(value, { maxLength: 100 }) });
    fc.assert(
      fc.property(fc.oneof(value, message), (v) => {
        expect(decode(jsonBytes(v))).toEqual(JSON.parse(JSON.stringify(v)));
      }),
      { numRuns: 300 },
    );
  });

  it('writes a long array element by element with the same bytes as JSON.stringify, non-ASCII included', () => {
    const v = { a: 1, skip: undefined, txs: Array.from({ length: 500 }, (_, i) => ({ i, s: `é${i}✓` })), tail: 'z' };
    expect(Buffer.from(jsonBytes(v)).toString('utf8')).toBe(JSON.stringify(v));
  });
});
