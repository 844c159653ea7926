/** The merge of word hits (search-rank.ts): sums, the matched-words factor, ties, and generations that start over. */
import { describe, expect, it } from 'vitest';
import { Ranker, termHits } from './search-rank.ts';

const weather = termHits([
  { slot: 0, score: 1 },
  { slot: 1, score: 2 },
  { slot: 2, score: 2 },
]);
const storm = termHits([{ slot: 2, score: 0.5 }]);
const all = (): boolean => true;

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
    expect(r.rank([{ hits: weather, times: 1 }, { hits: storm, times: 1 }], 3, 2, (s) => s !== 2)).toEqual([
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
