/**
 * Lengths as the spec means them: every "max N chars" limit (merchant_order_id, description,
 * reason, URLs, Idempotency-Key) counts Unicode code points, so an emoji is one character,
 * not the two UTF-16 units `String.length` counts. JSON Schema's maxLength counts the same way.
 */
export function codePoints(s: string): number {
  let n = s.length;
  for (let i = 0; i < s.length - 1; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        n--;
        i++;
      }
    }
  }
  return n;
}
