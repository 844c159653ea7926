/**
 * What the HTTP boundary property suites of every app share (issue 26): generators for hostile
 * bodies, media types and path segments, and the invariant every refusal must meet. Bodies are
 * built as text so duplicate keys, raw huge numbers and broken UTF-8 reach the wire unchanged.
 */
import fc from 'fast-check';
import { expect } from 'vitest';
import { ErrorEnvelope } from '../../gateway/schemas/common.ts';
import type { Res } from '../conformance/harness.ts';

export const astral = fc.string({ unit: fc.constantFrom('😀', '𝄞', '𠜎', 'a', 'é', '\u0000', '\uD800', '"', '\\'), maxLength: 40 });
const number = fc.oneof(fc.double(), fc.constantFrom('1e400', '-1e400', '1e-400', '123456789012345678901234567890', '-0', '0.0000000000000000001'));

/** JSON texts of scalars and small values, plus the app's own plausible literals. */
export function scalarText(literals: readonly string[]): fc.Arbitrary<string> {
  return fc.oneof(
    fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)),
    astral.map((s) => JSON.stringify(s)),
    number.map((n) => (typeof n === 'number' ? JSON.stringify(n) : n)),
    fc.constantFrom(...literals),
  );
}

/** Objects of plausible fields as text; the boolean repeats the first key. */
export function objectText(fields: readonly string[], values: fc.Arbitrary<string>): fc.Arbitrary<string> {
  return fc.tuple(fc.array(fc.tuple(fc.constantFrom(...fields), values), { maxLength: 6 }), fc.boolean()).map(([kv, dup]) => {
    const pairs = kv.map(([k, v]) => `${JSON.stringify(k)}:${v}`);
    if (dup && kv[0]) pairs.push(`${JSON.stringify(kv[0][0])}:${kv[0][1]}`);
    return `{${pairs.join(',')}}`;
  });
}

const deep = fc.tuple(fc.integer({ min: 20, max: 20_000 }), fc.constantFrom('{"metadata":', '{"a":', '[')).map(([n, open]) => {
  const close = open === '[' ? ']' : '}';
  return `${open.repeat(n)}1${close.repeat(n)}`;
});

/** Request bodies: plausible objects (some with a key twice), random JSON, deep nesting, random bytes, broken UTF-8, nothing. */
export function bodyBytes(objects: fc.Arbitrary<string>): fc.Arbitrary<Buffer> {
  return fc.oneof(
    objects.map((t) => Buffer.from(t, 'utf8')),
    fc.jsonValue({ maxDepth: 4 }).map((v) => Buffer.from(JSON.stringify(v) ?? 'null', 'utf8')),
    deep.map((t) => Buffer.from(t, 'utf8')),
    fc.uint8Array({ maxLength: 200 }).map((a) => Buffer.from(a)),
    objects.map((t) => Buffer.concat([Buffer.from(t.slice(0, -1), 'utf8'), Buffer.from(',"x":"\xff\xfe"}', 'latin1')])),
    fc.constant(Buffer.alloc(0)),
  );
}

export const contentType = fc.constantFrom(undefined, 'application/json', 'application/json; charset=utf-8', 'application/json; charset=latin1', 'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/json;charset=utf-16', '');

/** Path segments as sent: the app's valid-looking ids, random text encoded, raw percent garbage, over-long ids. */
export function segment(ids: fc.Arbitrary<string>): fc.Arbitrary<string> {
  return fc.oneof(
    ids,
    fc.string({ minLength: 1, maxLength: 60 }).filter((s) => s !== '.' && s !== '..').map(encodeURIComponent),
    fc.array(fc.constantFrom('%', '%f', '%ff', '%E0%A4%A', '%C0%80', '%00', '%2F', '%25', 'a', '😀', '%F0%9F%98'), { minLength: 1, maxLength: 8 }).map((xs) => xs.join('')).map((s) => s.replace(/😀/g, encodeURIComponent('😀'))),
    fc.integer({ min: 200, max: 3000 }).map((n) => 'x'.repeat(n)),
  );
}

/**
 * Spec "Errors": never a 5xx (but for `documented`, a 5xx code the route's docs name for input
 * that passed every check); a refusal is the envelope with a request_id, also in the request-id header.
 */
export function expectBoundary(r: Res, what: string, documented?: string): void {
  const code = (r.json as { error?: { code?: unknown } } | undefined)?.error?.code;
  if (documented === undefined || code !== documented) expect(r.status, what).toBeLessThan(500);
  if (r.status < 400) return;
  expect(ErrorEnvelope.safeParse(r.json).success, what).toBe(true);
  const requestId = (r.json as { error: { request_id: string } }).error.request_id;
  expect(requestId, what).toMatch(/^req_/);
  expect(r.headers['request-id'], what).toBe(requestId);
}
