import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { boundedJsonSize } from './body.ts';
import { hasDuplicateKey, isJsonMediaType, parseStrictJson } from './strict-json.ts';

const JSON_TYPE = 'application/json';
const bytes = (s: string) => Buffer.from(s, 'utf8');

describe('strict JSON bodies (issue 26 item 3)', () => {
  it('takes application/json with no charset or utf-8 only', () => {
    for (const ok of ['application/json', 'Application/JSON', 'application/json; charset=utf-8', 'application/json;charset=UTF-8', 'application/json; charset="utf-8"']) {
      expect(isJsonMediaType(ok), ok).toBe(true);
    }
    for (const bad of [undefined, '', 'text/plain', 'application/json; charset=latin1', 'application/json; charset=utf-16', 'application/jsonx', 'application/x-www-form-urlencoded', 'application/json-patch+json']) {
      expect(isJsonMediaType(bad), String(bad)).toBe(false);
    }
  });

  it('refuses invalid UTF-8 instead of decoding it to U+FFFD', () => {
    expect(parseStrictJson(Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d]), JSON_TYPE).ok).toBe(false);
    expect(parseStrictJson(Buffer.from('{"a":"\xed\xa0\x80"}', 'latin1'), JSON_TYPE).ok).toBe(false); // an encoded surrogate
    expect(parseStrictJson(bytes('{"a":"😀"}'), JSON_TYPE)).toEqual({ ok: true, value: { a: '😀' } });
  });

  it('refuses a key named twice at any depth, however it is escaped', () => {
    for (const dup of ['{"amount":"1","amount":"1000000"}', '{"a":{"b":1,"b":2}}', '[{"x":1},{"y":{"z":[{"k":1,"k":1}]}}]', '{"a":1,"\\u0061":2}', '{"a":{},"a":[]}']) {
      expect(hasDuplicateKey(dup), dup).toBe(true);
      expect(parseStrictJson(bytes(dup), JSON_TYPE).ok, dup).toBe(false);
    }
    for (const ok of ['{"a":1,"b":{"a":2}}', '[{"a":1},{"a":2}]', '{"a":"a:b","b":"\\"a\\":1"}', '{"":1,"a":{"":2}}', '"x:y:z"']) {
      expect(hasDuplicateKey(ok), ok).toBe(false);
    }
  });

  it('agrees with a recursive reference on generated documents', () => {
    // Objects generated with keys from a small alphabet so duplicates are frequent when spliced in.
    const key = fc.constantFrom('a', 'b', 'c', '\\u0061');
    const text = fc.letrec<{ v: string }>((tie) => ({
      v: fc.oneof(
        { depthSize: 'small' },
        fc.constantFrom('1', '"s"', 'null', '"a"'),
        fc.array(tie('v'), { maxLength: 3 }).map((xs) => `[${xs.join(',')}]`),
        fc.array(fc.tuple(key, tie('v')), { maxLength: 3 }).map((kv) => `{${kv.map(([k, v]) => `"${k}":${v}`).join(',')}}`),
      ),
    })).v;
    fc.assert(
      fc.property(text, (t) => {
        expect(hasDuplicateKey(t)).toBe(hasDuplicateReference(t));
      }),
      { numRuns: 300 },
    );
  });

  it('parses 100,000 levels of nesting without a stack overflow', () => {
    const deep = '{"a":'.repeat(100_000) + '1' + '}'.repeat(100_000);
    expect(parseStrictJson(bytes(deep), JSON_TYPE).ok).toBe(true);
  });
});

describe('boundedJsonSize (issue 26 item 1)', () => {
  it('is the serialised UTF-8 size for any JSON value within the bounds', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 6 }), (v) => {
        const size = Buffer.byteLength(JSON.stringify(v), 'utf8');
        expect(boundedJsonSize(v, Number.MAX_SAFE_INTEGER, 64)).toBe(size);
        expect(boundedJsonSize(v, size - 1, 64)).toBeNull();
      }),
      { numRuns: 500 },
    );
  });

  it('refuses past the depth bound without recursion, and Infinity, NUL and lone surrogates', () => {
    let deep: Record<string, unknown> = {};
    const root = deep;
    for (let i = 0; i < 100_000; i++) deep = deep.a = {} as Record<string, unknown>;
    expect(boundedJsonSize(root, Number.MAX_SAFE_INTEGER)).toBeNull();
    let at32: Record<string, unknown> = {};
    const root32 = at32;
    for (let i = 1; i < 32; i++) at32 = at32.a = {} as Record<string, unknown>;
    expect(boundedJsonSize(root32, 4096)).toBe(JSON.stringify(root32).length);
    at32.a = {};
    expect(boundedJsonSize(root32, 4096)).toBeNull();
    for (const bad of [{ n: Infinity }, { s: 'a\u0000' }, { '\uD800': 1 }, { s: ['\uDC00'] }]) expect(boundedJsonSize(bad, 4096), JSON.stringify(bad)).toBeNull();
  });
});

/** Reference duplicate finder: a recursive descent over the text (fine for small generated inputs). */
function hasDuplicateReference(t: string): boolean {
  let i = 0;
  let dup = false;
  const ws = () => {
    while (/\s/.test(t[i] ?? '')) i++;
  };
  const str = (): string => {
    const start = i;
    i++;
    while (t[i] !== '"') i += t[i] === '\\' ? 2 : 1;
    i++;
    return JSON.parse(t.slice(start, i)) as string;
  };
  const value = (): void => {
    ws();
    if (t[i] === '{') {
      i++;
      const keys = new Set<string>();
      ws();
      while (t[i] !== '}') {
        ws();
        const k = str();
        if (keys.has(k)) dup = true;
        keys.add(k);
        ws();
        i++; // :
        value();
        ws();
        if (t[i] === ',') i++;
        ws();
      }
      i++;
    } else if (t[i] === '[') {
      i++;
      ws();
      while (t[i] !== ']') {
        value();
        ws();
        if (t[i] === ',') i++;
        ws();
      }
      i++;
    } else if (t[i] === '"') str();
    else while (i < t.length && !/[,\]}\s]/.test(t[i]!)) i++;
  };
  value();
  return dup;
}
