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

/**
 * A word after its indefinite article, for names put into messages (`an OPEN invoice`, `a
 * DRAFT invoice`, `an unspecified address`). By the first letter, save the words whose vowel
 * is said as "you" or "wun" (`a uniqueLocal address`).
 */
export function withArticle(word: string, opts: { sentenceStart?: boolean } = {}): string {
  const an = /^[aeiou]/i.test(word) && !/^(uni|use|usu|uti|eu|one)/i.test(word);
  const article = an ? 'an' : 'a';
  return `${opts.sentenceStart ? article.replace('a', 'A') : article} ${word}`;
}
