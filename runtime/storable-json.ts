/**
 * What PostgreSQL can store of a parsed JSON value (jsonb and text hold no NUL and no unpaired
 * surrogate), for every edge that takes JSON: the HTTP gateways and the marketplace's listing
 * registration, which refuse such a value rather than fail the transaction that writes it.
 */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

export function storableString(s: string): boolean {
  return !s.includes('\u0000') && !LONE_SURROGATE.test(s);
}

/** How deep `metadata` may nest (an object holding only scalars is depth 1). */
export const MAX_JSON_DEPTH = 32;

/**
 * The serialised UTF-8 size of a parsed JSON value, walked without recursion and given up on
 * (null) as soon as it passes `maxBytes` or `maxDepth`, or meets a string (keys too) that
 * PostgreSQL cannot store or a number JSON cannot carry (1e400 parses to Infinity). No
 * recursion, so a value 100,000 deep is refused at depth `maxDepth + 1`, not by a stack overflow.
 */
export function boundedJsonSize(v: unknown, maxBytes: number, maxDepth: number = MAX_JSON_DEPTH): number | null {
  let bytes = 0;
  // Each entry: a value still to visit at its depth (containers count their own brackets).
  const todo: Array<{ v: unknown; depth: number }> = [{ v, depth: 0 }];
  while (todo.length > 0) {
    const { v: x, depth } = todo.pop()!;
    if (typeof x === 'string') {
      if (!storableString(x)) return null;
      bytes += Buffer.byteLength(JSON.stringify(x), 'utf8');
    } else if (typeof x === 'number') {
      if (!Number.isFinite(x)) return null;
      bytes += JSON.stringify(x).length;
    } else if (x === null || typeof x === 'boolean') {
      bytes += x === null ? 4 : x ? 4 : 5;
    } else if (typeof x === 'object') {
      if (depth + 1 > maxDepth) return null;
      const entries = Array.isArray(x) ? x.map((e) => [null, e] as const) : Object.entries(x);
      // Brackets plus one comma between entries.
      bytes += 2 + Math.max(0, entries.length - 1);
      for (const [k, e] of entries) {
        if (k !== null) {
          if (!storableString(k)) return null;
          bytes += Buffer.byteLength(JSON.stringify(k), 'utf8') + 1;
        }
        todo.push({ v: e, depth: depth + 1 });
      }
    } else {
      return null;
    }
    if (bytes > maxBytes) return null;
  }
  return bytes;
}
