/**
 * A word's scores without MiniSearch's wrapping (ADR 0096) are MiniSearch's own, to the last
 * bit: exact, prefix and typo matches, field boosts, listings replaced (discarded and added
 * again, so that terms still list discarded ones until MiniSearch's pass removes them).
 */
import fc from 'fast-check';
import MiniSearch from 'minisearch';
import { describe, expect, it } from 'vitest';
import { SEARCH_FIELDS, wordOptions } from './search-index.ts';
import { wordScores } from './search-score.ts';

const BOOST = { name: 3, tags: 2, category: 2, description: 1 };
const BOOSTS = SEARCH_FIELDS.map((f) => [f, BOOST[f as keyof typeof BOOST]] as const);
const VOCAB = ['weather', 'wether', 'weathers', 'forecast', 'geo', 'geocode', 'ai', 'a', 'news', 'new', '7', '17', '170', '1700', 't17', 'p17', 'storm', 'naïve'];
const word = fc.oneof(fc.constantFrom(...VOCAB), fc.stringMatching(/^[a-z0-9]{1,9}$/));
const text = fc.array(word, { maxLength: 4 }).map((w) => w.join(' '));
const doc = fc.record({ name: text, description: text, category: text, tags: text });

describe('wordScores', () => {
  it("gives MiniSearch's own score for every listing a word matches, or null where a discarded listing is still listed", () => {
    fc.assert(
      fc.property(fc.array(doc, { minLength: 1, maxLength: 30 }), fc.array(fc.nat(29), { maxLength: 5 }), fc.array(word, { minLength: 1, maxLength: 8 }), (docs, replaced, asked) => {
        const mini = new MiniSearch<{ id: string; name: string; description: string; category: string; tags: string }>({ fields: SEARCH_FIELDS, idField: 'id', autoVacuum: false });
        docs.forEach((d, i) => mini.add({ id: `res_${i}`, ...d }));
        for (const r of replaced) {
          const id = `res_${r % docs.length}`;
          mini.discard(id);
          mini.add({ id, ...docs[(r + 1) % docs.length]! });
        }
        for (const w of asked) {
          const got = wordScores(mini, w, wordOptions(w), BOOSTS);
          const internals = mini as unknown as { _documentIds: Map<number, string> };
          const want = new Map(mini.search(w, wordOptions(w)).map((h) => [h.id as string, h.score]));
          if (got === null) {
            expect(replaced.length).toBeGreaterThan(0);
            continue;
          }
          expect(new Map([...got].map(([short, score]) => [internals._documentIds.get(short)!, score]))).toEqual(want);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('a word that matches no term, by prefix or typo, scores no listing', () => {
    const mini = new MiniSearch({ fields: SEARCH_FIELDS, idField: 'id' });
    mini.add({ id: 'a', name: 'weather 17', description: '', category: '', tags: 't17' });
    expect(wordScores(mini, 'p12345', wordOptions('p12345'), BOOSTS)).toEqual(new Map());
    expect([...wordScores(mini, 'p17', wordOptions('p17'), BOOSTS)!.keys()]).toHaveLength(1);
  });
});
