/**
 * Strict base64 for every value that arrives from outside as base64 (x402 legs in headers,
 * ML-DSA keys and signatures in listings). Node's `Buffer.from(s, 'base64')` skips characters
 * it does not know and ignores stray bits, so many texts decode to one value: a signature
 * check would pass for a text the signer never wrote, and a cache keyed by the text would
 * miss. Only the canonical spelling is read: RFC 4648 base64 with its padding, or base64url
 * without padding (the alphabets are never mixed), with zero bits in the last character's
 * unused part. The decoding is @scure/base's, which refuses everything else.
 */
import { base64, base64urlnopad } from '@scure/base';

const URL_ALPHABET = /^[A-Za-z0-9_-]*$/;

/** The bytes of a canonical base64 or base64url text, or null. */
export function strictBase64(s: string): Uint8Array | null {
  try {
    return URL_ALPHABET.test(s) ? base64urlnopad.decode(s) : base64.decode(s);
  } catch {
    return null;
  }
}
