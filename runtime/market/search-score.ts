/**
 * One word's score per listing, as MiniSearch 7's `executeQuerySpec` computes it for a query
 * of that one word (exact, prefix and typo matches, BM25 with the field boosts), without what
 * its `search` and `executeQuery` add around it: the word tokenized again, the options merged
 * and the boosts rebuilt per call, and a result object per matched listing (its terms and
 * matched fields), of which the index reads only the score. For a new word that matches a
 * hundred listings that wrapping was most of MiniSearch's share of a new question (ADR 0096).
 *
 * The arithmetic is MiniSearch's, operation for operation in its order, so a score is equal
 * to the last bit: the exact term first, then its prefix matches in the tree's order, then its
 * typo matches that are not prefix matches, each listing's sum in that order. MiniSearch stays
 * the index and the judge of matches: the lookups (`get`, `atPrefix`, `fuzzyGet`) are its own.
 * A term that still lists a discarded listing (MiniSearch removes those lazily, while scoring,
 * and that changes the counts its later scores use) is left to MiniSearch's own pass.
 * search-score.test.ts holds the scores equal to MiniSearch's `search`, so a release of
 * MiniSearch that changes these internals fails there.
 */
import MiniSearch from 'minisearch';

/** Per field id, each listing's (short id's) count of the term. */
type TermData = Map<number, Map<number, number>>;

interface Internals {
  _index: {
    get(term: string): TermData | undefined;
    atPrefix(prefix: string): Iterable<[string, TermData]>;
    fuzzyGet(term: string, maxDistance: number): Map<string, [TermData, number]>;
  };
  _fieldIds: Record<string, number>;
  _avgFieldLength: number[];
  _fieldLength: Map<number, number[]>;
  _documentIds: Map<number, unknown>;
  _documentCount: number;
}

/** MiniSearch's defaults (`defaultSearchOptions`), which the index does not override. */
const MAX_FUZZY = 6;
const FUZZY_WEIGHT = 0.45;
const PREFIX_WEIGHT = 0.375;
const BM25 = { k: 1.2, b: 0.7, d: 0.5 };

export interface WordMatch {
  prefix: boolean;
  fuzzy: number | false;
}

/**
 * Scores by MiniSearch's short document id, or null when a term met lists a discarded
 * listing (then MiniSearch's own pass must score it). `boosts`: [field name, boost] in the
 * order MiniSearch is given its fields.
 */
export function wordScores(mini: object, word: string, match: WordMatch, boosts: ReadonlyArray<readonly [string, number]>): Map<number, number> | null {
  const m = mini as unknown as Internals;
  const scores = new Map<number, number>();
  const fields = boosts.map(([name, boost]) => [m._fieldIds[name]!, boost] as const);
  const exact = m._index.get(word);
  if (exact !== undefined && !addTerm(m, fields, 1, exact, scores)) return null;
  let typos: Map<string, [TermData, number]> | undefined;
  if (match.fuzzy) {
    const maxDistance = Math.min(MAX_FUZZY, Math.round(word.length * match.fuzzy));
    if (maxDistance) typos = m._index.fuzzyGet(word, maxDistance);
  }
  if (match.prefix) {
    for (const [term, data] of m._index.atPrefix(word)) {
      const distance = term.length - word.length;
      if (!distance) continue;
      // A term that is both a prefix and a typo match is scored once, as a prefix match.
      typos?.delete(term);
      if (!addTerm(m, fields, (PREFIX_WEIGHT * term.length) / (term.length + 0.3 * distance), data, scores)) return null;
    }
  }
  if (typos) {
    for (const [term, [data, distance]] of typos) {
      if (!distance) continue;
      if (!addTerm(m, fields, (FUZZY_WEIGHT * term.length) / (term.length + distance), data, scores)) return null;
    }
  }
  return scores;
}

const tokenize = MiniSearch.getDefault('tokenize') as (text: string) => string[];
const processTerm = MiniSearch.getDefault('processTerm') as (term: string) => unknown;

/** The word tokenizes and processes to itself: MiniSearch would search it as this one term, by `wordScores` too. */
export function isOneTerm(word: string): boolean {
  const t = tokenize(word);
  return t.length === 1 && t[0] === word && processTerm(word) === word;
}

/** MiniSearch's `termResults` for one matched term, its scores summed into `scores`; false at a discarded listing. */
function addTerm(m: Internals, fields: ReadonlyArray<readonly [number, number]>, weight: number, data: TermData, scores: Map<number, number>): boolean {
  for (const [fieldId, fieldBoost] of fields) {
    const freqs = data.get(fieldId);
    if (freqs === undefined) continue;
    const matching = freqs.size;
    const avg = m._avgFieldLength[fieldId]!;
    for (const [docId, termFreq] of freqs) {
      if (!m._documentIds.has(docId)) return false;
      const fieldLength = m._fieldLength.get(docId)![fieldId]!;
      // termWeight * termBoost (1) * fieldBoost * docBoost (1) * rawScore, as MiniSearch multiplies.
      const weighted = weight * fieldBoost * bm25(termFreq, matching, m._documentCount, fieldLength, avg);
      const had = scores.get(docId);
      scores.set(docId, had === undefined ? weighted : had + weighted);
    }
  }
  return true;
}

/** MiniSearch's `calcBM25Score`, expression for expression. */
function bm25(termFreq: number, matchingCount: number, totalCount: number, fieldLength: number, avgFieldLength: number): number {
  const { k, b, d } = BM25;
  const invDocFreq = Math.log(1 + (totalCount - matchingCount + 0.5) / (matchingCount + 0.5));
  return invDocFreq * (d + (termFreq * (k + 1)) / (termFreq + k * (1 - b + (b * fieldLength) / avgFieldLength)));
}
