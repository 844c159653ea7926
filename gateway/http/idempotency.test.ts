import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson, requestHash } from './idempotency.ts';

/** The fingerprint as records written before the one-pass writer hold it: map and join per level, three hash updates. */
function joinedJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(joinedJson).join(',')}]`;
  if (typeof v === 'object' && v !== null) {
    const o = v as Record<string, unknown>;
    return `{${Object.keys(o)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${joinedJson(o[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}
const joinedHash = (route: string, body: unknown) => createHash('sha256').update(route).update('\n').update(joinedJson(body)).digest('hex');

/** JSON values as a parsed body holds them, keys in any order, strings with escapes and astral characters. */
const parsedJson = fc.jsonValue({ maxDepth: 6 }).map((v) => JSON.parse(JSON.stringify(v)) as unknown);

describe('idempotency request fingerprint (spec Endpoints rule 1: same key, same body)', () => {
  it('writes the canonical text the joined writer wrote, for any parsed body', () => {
    fc.assert(
      fc.property(parsedJson, (v) => {
        expect(canonicalJson(v)).toBe(joinedJson(v));
      }),
      { numRuns: 2_000 },
    );
  });

  it('quotes any string as JSON.stringify does: controls, quotes, backslashes, DEL, non-ASCII, lone surrogates, as keys and values', () => {
    const units = fc.array(fc.integer({ min: 0, max: 0xffff }), { maxLength: 12 }).map((cs) => String.fromCharCode(...cs));
    const text = fc.oneof(units, fc.string({ unit: 'binary' }), fc.string(), fc.constantFrom('', '"', '\\', '\u007f', '\u001f', '\ud800', 'a"b\\c'));
    fc.assert(
      fc.property(fc.dictionary(text, fc.oneof(text, fc.array(text, { maxLength: 3 }))), text, (o, s) => {
        expect(canonicalJson(o)).toBe(joinedJson(o));
        expect(canonicalJson(s)).toBe(JSON.stringify(s));
      }),
      { numRuns: 2_000 },
    );
  });

  it('gives the same hash as the three-update digest, so stored records still match their retries', () => {
    fc.assert(
      fc.property(fc.string(), parsedJson, (route, v) => {
        expect(requestHash(route, v)).toBe(joinedHash(route, v));
      }),
      { numRuns: 1_000 },
    );
    // A fixed vector, from the code before: key order, -0, escapes and an astral character.
    const body = JSON.parse('{"payment":{"legs":{"fee":"eyJ4IjoxfQ==","seller":{"x402Version":2,"payload":{"b":[1,2.5,-0,null,true,"\\u00e9\\ud83d\\ude00"],"a":{}}}}},"intent_id":"pi_abc"}') as unknown;
    expect(requestHash('POST /api/v1/purchase', body)).toBe('b9da8f2a8cd78c15cbda09e350383bf69731ec63d4e5a90f44c1659737e7ae97');
  });

  it('keeps what a value the parser never makes renders as: holes, undefined, non-JSON leaves', () => {
    // eslint-disable-next-line no-sparse-arrays
    for (const v of [[1, , 3], [undefined], { a: undefined, b: [() => 1] }, new Date(0), { d: new Date(0) }, [Symbol('s')]]) expect(canonicalJson(v)).toBe(joinedJson(v));
  });

  it('ignores key order and whitespace, not values', () => {
    expect(requestHash('r', JSON.parse('{"a":1,"b":{"c":[1,2]}}'))).toBe(requestHash('r', JSON.parse('{ "b" : { "c" : [1, 2] }, "a" : 1 }')));
    expect(requestHash('r', { a: 1 })).not.toBe(requestHash('r', { a: 2 }));
    expect(requestHash('r', { a: 1 })).not.toBe(requestHash('s', { a: 1 }));
  });
});
