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

/**
 * Members written in a valid JSON text: its colons outside strings (every member has one, and
 * nothing else outside a string does). Strings are skipped with `indexOf`, not walked per
 * character as the scanner does; both searches only move forward, so the cost is linear.
 */
function membersInText(text: string): number {
  let n = 0;
  let from = 0;
  let colon = text.indexOf(':');
  for (;;) {
    const quote = text.indexOf('"', from);
    const end = quote < 0 ? text.length : quote;
    while (colon >= 0 && colon < end) {
      n++;
      colon = text.indexOf(':', colon + 1);
    }
    if (quote < 0) return n;
    // The closing quote is the first one after an even run of backslashes.
    let close = quote;
    for (;;) {
      close = text.indexOf('"', close + 1);
      let before = close - 1;
      while (text.charCodeAt(before) === 0x5c) before--;
      if ((close - 1 - before) % 2 === 0) break;
    }
    from = close + 1;
    if (colon >= 0 && colon < from) colon = text.indexOf(':', from);
  }
}

/** Own keys of every object in a parsed value, without recursion (depth costs no stack). */
function membersInValue(value: unknown): number {
  let n = 0;
  const open: unknown[] = [value];
  while (open.length > 0) {
    const v = open.pop();
    if (typeof v !== 'object' || v === null) continue;
    if (Array.isArray(v)) {
      for (const e of v) if (typeof e === 'object' && e !== null) open.push(e);
      continue;
    }
    const keys = Object.keys(v);
    n += keys.length;
    for (const k of keys) {
      const e = (v as Record<string, unknown>)[k];
      if (typeof e === 'object' && e !== null) open.push(e);
    }
  }
  return n;
}

/**
 * True when some object of `text` names a key twice, given `value`, its `JSON.parse`: each
 * object of the text is one object of the value, holding each key it names once (the last
 * wins), so the value has fewer keys than the text has members exactly when a key repeats.
 * The same answer as `hasDuplicateKey` (a property test holds them equal) at a fraction of
 * its cost: counting needs no key decoded or kept.
 */
function repeatsKey(text: string, value: unknown): boolean {
  return typeof value === 'object' && value !== null && membersInValue(value) !== membersInText(text);
}

/** The value, or `{ ok: false }` when the bytes are not one strict JSON document. */
export function parseStrictJsonBytes(raw: Uint8Array): { ok: true; value: unknown } | { ok: false } {
  try {
    const text = decoder.decode(raw);
    const value: unknown = JSON.parse(text);
    return repeatsKey(text, value) ? { ok: false } : { ok: true, value };
  } catch {
    return { ok: false };
  }
}
