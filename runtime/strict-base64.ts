/**
 * Strict base64 for every value that arrives from outside as base64 (x402 legs in headers,
 * ML-DSA keys and signatures in listings). Node's `Buffer.from(s, 'base64')` skips characters
 * it does not know and ignores stray bits, so many texts decode to one value: a signature
 * check would pass for a text the signer never wrote, and a cache keyed by the text would
 * miss. Only the canonical spelling is read: RFC 4648 base64 with its padding, or base64url
 * without padding (the alphabets are never mixed), with zero bits in the last character's
 * unused part. That is exactly the texts Node's encoder writes: a text is read when encoding
 * what Node's lenient decoder makes of it gives the text back. Both run natively, several times
 * faster than a decoder in JavaScript (@scure/base's, the reference a property test holds this
 * equal to).
 */

// base64url when the text has none of base64's own characters. Any other stray character fails
// the round trip whichever alphabet is tried, so three native scans decide what a pattern over
// the whole text did: a leg of the ANM lane is 14 KB of base64, where a pattern costs ~30 µs.
const urlAlphabet = (s: string): boolean => !s.includes('+') && !s.includes('/') && !s.includes('=');

/** The bytes of a canonical base64 or base64url text, or null. */
export function strictBase64(s: string): Uint8Array | null {
  const encoding = urlAlphabet(s) ? 'base64url' : 'base64';
  const bytes = Buffer.from(s, encoding);
  if (bytes.toString(encoding) !== s) return null;
  // A copy: a short text's bytes are a view into Node's shared pool, which other requests' bytes fill.
  return new Uint8Array(bytes);
}
