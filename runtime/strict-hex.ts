/**
 * Lowercase hex for every signed ANM transfer that arrives from outside (x402 legs): ~10,600
 * digits each, read on every purchase and routed execution. A pattern test and then a decoder
 * in JavaScript scan the text twice (~115 µs a leg when the text is not in the CPU's cache);
 * Node's native decoder and encoder do it in ~20 µs. `Buffer.from(s, 'hex')` stops at the first
 * pair it cannot read and reads uppercase, so a text is read only when it decodes whole and
 * encoding the bytes gives the text back: exactly the lowercase, even-length hex texts.
 */
export function strictLowerHex(s: string): Uint8Array | null {
  const bytes = Buffer.from(s, 'hex');
  if (bytes.length * 2 !== s.length || bytes.toString('hex') !== s) return null;
  // A short text's bytes are a view into Node's shared pool, which other requests' bytes fill:
  // copied. A long one's own memory is viewed as a plain Uint8Array, whose slice() copies (a
  // Buffer's would be a view, and the decoded key and signature would alias these bytes).
  return bytes.byteLength === bytes.buffer.byteLength ? new Uint8Array(bytes.buffer, 0, bytes.length) : new Uint8Array(bytes);
}
