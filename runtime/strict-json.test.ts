import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { hasDuplicateKey, parseStrictJsonBytes } from './strict-json.ts';

const bytes = (s: string) => Buffer.from(s, 'utf8');

// Keys and strings that look like structure: colons, escaped quotes, backslash runs, and a key
// spelled two ways ("a" and "\u0061"), so that duplicates and false colons are both frequent.
const piece = fc.constantFrom('a', 'b', '\\u0061', 'a:', ':', '\\"', '\\\\', '\\\\\\"', ':\\\\', '{\\"a\\":1}');
const ws = fc.constantFrom('', ' ', '\n\t ');
const document = fc.letrec<{ v: string }>((tie) => ({
  v: fc.oneof(
    { depthSize: 'small' },
    fc.constantFrom('1', '-0.5e3', 'true', 'null'),
    piece.map((p) => `"${p}"`),
    fc.tuple(ws, fc.array(tie('v'), { maxLength: 3 })).map(([s, xs]) => `[${s}${xs.join(`${s},${s}`)}${s}]`),
    fc.tuple(ws, fc.array(fc.tuple(piece, tie('v')), { maxLength: 4 })).map(([s, kv]) => `{${s}${kv.map(([k, v]) => `"${k}"${s}:${s}${v}`).join(`${s},`)}${s}}`),
  ),
})).v;

describe('parseStrictJsonBytes', () => {
  it('refuses exactly the documents the scanner finds a repeated key in', () => {
    fc.assert(
      fc.property(document, (t) => {
        expect(() => JSON.parse(t) as unknown, t).not.toThrow();
        expect(parseStrictJsonBytes(bytes(t)).ok, t).toBe(!hasDuplicateKey(t));
      }),
      { numRuns: 2_000 },
    );
  });

  it('counts members, not colons inside strings or keys spelled differently', () => {
    for (const dup of ['{"a":"x:y","a":1}', '{"\\"":1,"\\u0022":2}', '{"k":{"\\\\":1,"\\\\":2}}', '[{"a:b":0,"a:b":0}]']) expect(parseStrictJsonBytes(bytes(dup)).ok, dup).toBe(false);
    for (const ok of ['{"a":"\\":","b":"\\\\","c":"\\\\\\":"}', '{"a:":1,"a":2}', '"::"', '[":",{"":":"}]', '{"__proto__":1,"a":{"__proto__":2}}']) expect(parseStrictJsonBytes(bytes(ok)).ok, ok).toBe(true);
  });

  it('checks 100,000 levels of nesting without recursion', () => {
    expect(parseStrictJsonBytes(bytes('{"a":'.repeat(100_000) + '1' + '}'.repeat(100_000))).ok).toBe(true);
    expect(parseStrictJsonBytes(bytes('[{"a":'.repeat(100_000) + '{"b":1,"b":2}' + '}]'.repeat(100_000))).ok).toBe(false);
  });
});
