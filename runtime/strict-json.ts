/**
 * Strict JSON from bytes, for every place a document arrives from outside (request bodies,
 * base64 x402 legs): the bytes must be valid UTF-8 (a fatal decoder, never U+FFFD), the text
 * strict JSON, and no object anywhere may name a key twice: with last-key-wins parsing a proxy
 * that reads the first `amount` would see another charge than we do. Duplicates are found with
 * jsonc-parser's scanner (ADR 0018), a tokenizer without recursion, so depth costs no stack.
 * The HTTP media-type rules sit on top of this in gateway/http/strict-json.ts.
 */
import * as jsonc from 'jsonc-parser';

// SyntaxKind is a const enum in jsonc-parser's typings, which isolated modules cannot inline;
// its runtime object carries the same numbers.
const KIND = (jsonc as unknown as { SyntaxKind: Record<'OpenBraceToken' | 'CloseBraceToken' | 'OpenBracketToken' | 'CloseBracketToken' | 'CommaToken' | 'StringLiteral' | 'EOF', number> }).SyntaxKind;
const { OpenBraceToken, CloseBraceToken, OpenBracketToken, CloseBracketToken, CommaToken, StringLiteral, EOF } = KIND;

const decoder = new TextDecoder('utf-8', { fatal: true });

/** True when some object in the (already valid) JSON text names a key twice. */
export function hasDuplicateKey(text: string): boolean {
  // Cheap exit: a document with fewer than two colons has at most one key.
  const first = text.indexOf(':');
  if (first < 0 || text.indexOf(':', first + 1) < 0) return false;
  const scanner = jsonc.createScanner(text, true);
  // One entry per open container: the keys seen so far for an object, null for an array.
  const open: Array<Set<string> | null> = [];
  let expectKey = false;
  for (let t: number = scanner.scan(); t !== EOF; t = scanner.scan()) {
    switch (t) {
      case OpenBraceToken:
        open.push(new Set());
        expectKey = true;
        break;
      case OpenBracketToken:
        open.push(null);
        expectKey = false;
        break;
      case CloseBraceToken:
      case CloseBracketToken:
        open.pop();
        expectKey = false;
        break;
      case CommaToken:
        expectKey = open[open.length - 1] != null;
        break;
      case StringLiteral:
        if (expectKey) {
          const keys = open[open.length - 1]!;
          const key = scanner.getTokenValue();
          if (keys.has(key)) return true;
          keys.add(key);
          expectKey = false;
        }
        break;
      default:
        break;
    }
  }
  return false;
}

/** The value, or `{ ok: false }` when the bytes are not one strict JSON document. */
export function parseStrictJsonBytes(raw: Uint8Array): { ok: true; value: unknown } | { ok: false } {
  try {
    const text = decoder.decode(raw);
    const value: unknown = JSON.parse(text);
    return hasDuplicateKey(text) ? { ok: false } : { ok: true, value };
  } catch {
    return { ok: false };
  }
}
