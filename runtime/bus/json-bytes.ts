/**
 * JSON bytes of a bus message. `JSON.stringify` builds a large result as a rope that the
 * UTF-8 encoder first flattens into one string, in V8's large-object space once past 128 kB:
 * fresh pages, each a page fault, and on this project's 2-core guest a fault costs ~12 µs
 * (docs/benchmarks.md). The indexer's block signal (1,000 transactions, ~280 kB) paid that
 * three times per block. Here an object's property whose value is an array of more than
 * ELEMENTS_INLINE elements is written element by element, each element a small flat string,
 * straight into one buffer; everything else is what JSON.stringify gives. The bytes decode to the same value as JSON.stringify's.
 */
const ELEMENTS_INLINE = 64;

export function jsonBytes(data: unknown): Uint8Array {
  if (data === null || typeof data !== 'object' || Array.isArray(data) || typeof (data as { toJSON?: unknown }).toJSON === 'function') {
    return Buffer.from(JSON.stringify(data) ?? 'null', 'utf8');
  }
  const entries = Object.entries(data as Record<string, unknown>);
  if (!entries.some(([, v]) => Array.isArray(v) && v.length > ELEMENTS_INLINE)) return Buffer.from(JSON.stringify(data), 'utf8');
  const parts: string[] = ['{'];
  for (const [k, v] of entries) {
    if (Array.isArray(v) && v.length > ELEMENTS_INLINE) {
      parts.push(parts.length > 1 ? ',' : '', JSON.stringify(k), ':[');
      for (let i = 0; i < v.length; i++) parts.push(i > 0 ? ',' : '', JSON.stringify(v[i]) ?? 'null');
      parts.push(']');
      continue;
    }
    const json = JSON.stringify(v);
    if (json === undefined) continue; // as JSON.stringify: a function or undefined leaves the key out
    parts.push(parts.length > 1 ? ',' : '', JSON.stringify(k), ':', json);
  }
  parts.push('}');
  let size = 0;
  for (const p of parts) size += Buffer.byteLength(p, 'utf8');
  const out = Buffer.allocUnsafe(size);
  let at = 0;
  for (const p of parts) at += out.write(p, at, 'utf8');
  return out;
}
