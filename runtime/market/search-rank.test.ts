/**
 * The merge of word hits (search-rank.ts): sums, the matched-words factor, ties, generations
 * that start over, and a page that is always the head of the whole ranking, however much of
 * the longest word's list its walk leaves unread.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { heldEntries, Ranker, scoreAt, termHits, WORD_OVERHEAD_ENTRIES, type Pass, type Ranked, type TermHits } from './search-rank.ts';

const weather = termHits([
  { slot: 0, score: 1 },
  { slot: 1, score: 2 },
  { slot: 2, score: 2 },
]);
const storm = termHits([{ slot: 2, score: 0.5 }]);
const all: Pass = { has: () => true };

describe('heldEntries', () => {
  it('counts a word that matches nothing, or one listing, at its own cost: one-off words cannot be kept almost without bound', () => {
    expect(heldEntries(termHits([]))).toBeGreaterThanOrEqual(WORD_OVERHEAD_ENTRIES);
    expect(WORD_OVERHEAD_ENTRIES).toBeGreaterThanOrEqual(32);
    // One hit in 10,000 listings: the hit and its sparse lookup besides the word's own cost.
    expect(heldEntries(termHits([{ slot: 3, score: 1 }], 10_000))).toBe(WORD_OVERHEAD_ENTRIES + 2);
  });
});

describe('Ranker', () => {
  it('sums each word times its count, multiplies by the distinct words matched, best first, equal scores by slot', () => {
    const r = new Ranker();
    expect(r.rank([{ hits: weather, times: 2 }], 3, 0, all)).toEqual([
      { slot: 1, score: 4 },
      { slot: 2, score: 4 },
      { slot: 0, score: 2 },
    ]);
    // Slot 2: (2 + 0.5) × 2 words.
    expect(r.rank([{ hits: weather, times: 1 }, { hits: storm, times: 1 }], 3, 2, all)).toEqual([
      { slot: 2, score: 5 },
      { slot: 1, score: 2 },
    ]);
    expect(r.rank([{ hits: weather, times: 1 }, { hits: storm, times: 1 }], 3, 2, { has: (s) => s !== 2 })).toEqual([
      { slot: 1, score: 2 },
      { slot: 0, score: 1 },
    ]);
  });

  it('gives the same page across the wrap of its generation stamps', () => {
    const r = new Ranker();
    const words = [{ hits: weather, times: 1 }, { hits: storm, times: 1 }];
    const want = r.rank(words, 3, 0, all);
    (r as unknown as { gen: number }).gen = 0x7fffffff - 1;
    for (let i = 0; i < 3; i++) expect(r.rank(words, 3, 0, all)).toEqual(want);
  });
});

type Words = Array<{ hits: TermHits; times: number }>;

/**
 * Every slot any word holds, scored as the ranking defines it: the words summed shortest list
 * first (the query's order among equal lengths), times the distinct words matched; then the
 * ones that pass, best first, equal scores by slot.
 */
function wholeRanking(words: Words, pass: Pass): Ranked[] {
  const order = [...words].sort((a, b) => a.hits.slots.length - b.hits.slots.length);
  const slots = new Set(words.flatMap((w) => [...w.hits.slots]));
  const out: Ranked[] = [];
  for (const slot of slots) {
    let sum = 0;
    let matched = 0;
    for (const w of order) {
      const i = w.hits.slots.indexOf(slot);
      if (i < 0) continue;
      sum += w.times * w.hits.scores[i]!;
      matched++;
    }
    if (pass.has(slot)) out.push({ slot, score: sum * matched });
  }
  return out.sort((a, b) => b.score - a.score || a.slot - b.slot);
}

const CAPACITY = 24;
/**
 * Few distinct scores, so that ties are common: halves and integers, whose sums often equal
 * another word's score alone (a listing two words match ties one that one word matches), and
 * sums whose value depends on their order (0.1 + 0.2 + 0.3).
 */
const score = fc.oneof(fc.constantFrom(0.5, 1, 1.5, 2, 3, 0.1, 0.2, 0.3), fc.double({ min: 0.01, max: 10, noNaN: true }));
const wordHits = fc
  .uniqueArray(fc.record({ slot: fc.integer({ min: 0, max: CAPACITY - 1 }), score }), { selector: (p) => p.slot, minLength: 1, maxLength: CAPACITY })
  .map((pairs) => termHits(pairs, CAPACITY));
const words = fc.array(fc.record({ hits: wordHits, times: fc.integer({ min: 1, max: 3 }) }), { minLength: 1, maxLength: 4 });
const passing = fc.oneof(fc.constant(null), fc.uniqueArray(fc.integer({ min: 0, max: CAPACITY - 1 }), { maxLength: CAPACITY }));

describe('Ranker pages', () => {
  it('a page of any size is the head of the whole ranking under the filter: scores, order, ties by slot', () => {
    fc.assert(
      fc.property(words, passing, fc.integer({ min: 0, max: CAPACITY + 1 }), (ws, only, limit) => {
        const pass: Pass = only === null ? all : { has: (s) => only.includes(s) };
        const whole = wholeRanking(ws, pass);
        const r = new Ranker();
        expect(r.rank(ws, CAPACITY, limit, pass)).toEqual(limit ? whole.slice(0, limit) : whole);
        // Asked again (the stamps of the last question still there), and as one more than a page: `has_more`.
        expect(r.rank(ws, CAPACITY, limit + 1, pass)).toEqual(whole.slice(0, limit + 1));
      }),
      {
        numRuns: 5000,
        examples: [
          // A listing both words hold ties the page's last on score with an earlier slot, though the
          // shorter word scores it lower than the last: (1 + 1) × 2 = (1.5 + 0.5) × 2.
          [[{ hits: termHits([{ slot: 5, score: 1.5 }, { slot: 4, score: 1 }], CAPACITY), times: 1 }, { hits: termHits([{ slot: 5, score: 0.5 }, { slot: 4, score: 1 }, { slot: 7, score: 1 }, { slot: 9, score: 0.5 }], CAPACITY), times: 1 }], null, 1],
        ],
      },
    );
  });

  it('reads the longest list only as far as the page needs', () => {
    // Two words with no listing in common, every score equal: the page is ten slots in slot order.
    const even = termHits(Array.from({ length: 500 }, (_, i) => ({ slot: 2 * i, score: 1 })), 1000);
    const odd = termHits(Array.from({ length: 400 }, (_, i) => ({ slot: 2 * i + 1, score: 1 })), 1000);
    // Its lookup is built once in the word's life, not per question: built before counting.
    scoreAt(even, 0);
    const read = new Set<PropertyKey>();
    const counted = { ...even, slots: new Proxy(even.slots, { get: (t, k): unknown => (read.add(k), Reflect.get(t, k) as unknown) }) };
    const page = new Ranker().rank([{ hits: counted, times: 1 }, { hits: odd, times: 1 }], 1000, 10, all);
    expect(page.map((p) => p.slot)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(read.size).toBeLessThan(20);
  });

  it('sums a listing\'s words shortest list first, whatever the order the query names them in', () => {
    // Floating-point sums depend on their order: (0.1 + 0.2) + 0.3 is 0.6000000000000001, (0.3 + 0.2) + 0.1 is 0.6.
    const long = termHits([{ slot: 0, score: 0.1 }, { slot: 1, score: 1 }, { slot: 2, score: 1 }], 3);
    const mid = termHits([{ slot: 0, score: 0.2 }, { slot: 1, score: 1 }], 3);
    const short = termHits([{ slot: 0, score: 0.3 }], 3);
    const page = new Ranker().rank([{ hits: long, times: 1 }, { hits: mid, times: 1 }, { hits: short, times: 1 }], 3, 0, all);
    expect(page.find((p) => p.slot === 0)?.score).toBe(((0.3 + 0.2) + 0.1) * 3);
  });
});

describe('termHits', () => {
  it('gives each slot its score by lookup, dense or sparse, and NaN for a slot the word does not hold', () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.record({ slot: fc.integer({ min: 0, max: 999 }), score }), { selector: (p) => p.slot, maxLength: 200 }), (pairs) => {
        const h = termHits([...pairs], 1000);
        const want = new Map(pairs.map((p) => [p.slot, p.score]));
        const got = Array.from({ length: 1001 }, (_, s) => scoreAt(h, s));
        expect(got).toEqual(Array.from({ length: 1001 }, (_, s) => want.get(s) ?? NaN));
      }),
      { numRuns: 100 },
    );
  });
});
