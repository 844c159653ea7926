/**
 * Ranking arithmetic of the search index, apart from MiniSearch and the catch-up: a query's
 * words are scored one by one (MiniSearch's BM25 with the boosts, prefix and fuzzy weights),
 * and a query of several words sums them and multiplies by how many distinct words matched,
 * which is what MiniSearch's own `combineWith: 'OR'` does. Scoring word by word lets each
 * word's hits be kept across queries: agents ask new combinations of the same few words.
 */

/** One word's hits, best first (ties: the older listing first). */
export interface TermHits {
  slots: Int32Array;
  scores: Float64Array;
}

export function termHits(pairs: Array<{ slot: number; score: number }>): TermHits {
  pairs.sort((a, b) => b.score - a.score || a.slot - b.slot);
  return { slots: Int32Array.from(pairs, (p) => p.slot), scores: Float64Array.from(pairs, (p) => p.score) };
}

export interface Ranked {
  slot: number;
  score: number;
}

/**
 * The best `limit` slots (all when `limit` is 0) that `passes`, best first, ties by slot.
 * Candidates are compared on score before `passes` is asked, so a ceiling is checked only
 * for the few that could enter the page.
 */
export class Ranker {
  private acc = new Float64Array(0);
  private matched = new Int32Array(0);
  private stamp = new Int32Array(0);
  /** The slots a merge touched, in first-touch order: reused across queries, as the sums are. */
  private touched = new Int32Array(0);
  private gen = 0;

  /** `words`: each distinct word's hits and how many times the query names it. */
  rank(words: ReadonlyArray<{ hits: TermHits; times: number }>, capacity: number, limit: number, passes: (slot: number) => boolean): Ranked[] {
    const only = words.length === 1 ? words[0] : undefined;
    if (only) return this.single(only.hits, only.times, limit, passes);
    this.grow(capacity);
    // A stamp is an Int32: start the generations over before they would wrap.
    if (this.gen === 0x7fffffff) {
      this.stamp.fill(0);
      this.gen = 0;
    }
    const gen = ++this.gen;
    const touched = this.touched;
    let n = 0;
    for (const { hits, times } of words) {
      for (let i = 0; i < hits.slots.length; i++) {
        const s = hits.slots[i]!;
        if (this.stamp[s] !== gen) {
          this.stamp[s] = gen;
          this.acc[s] = 0;
          this.matched[s] = 0;
          touched[n++] = s;
        }
        this.acc[s] = this.acc[s]! + times * hits.scores[i]!;
        this.matched[s] = this.matched[s]! + 1;
      }
    }
    const page = new TopK(limit);
    for (let i = 0; i < n; i++) {
      const s = touched[i]!;
      page.offer(s, this.acc[s]! * this.matched[s]!, passes);
    }
    return page.sorted();
  }

  /** One word: its hits are already in order, so the page is the first that pass. */
  private single(hits: TermHits, times: number, limit: number, passes: (slot: number) => boolean): Ranked[] {
    const out: Ranked[] = [];
    for (let i = 0; i < hits.slots.length && (!limit || out.length < limit); i++) {
      const s = hits.slots[i]!;
      if (passes(s)) out.push({ slot: s, score: times * hits.scores[i]! });
    }
    return out;
  }

  private grow(capacity: number): void {
    if (this.acc.length >= capacity) return;
    const n = Math.max(capacity, this.acc.length * 2, 1024);
    this.acc = new Float64Array(n);
    this.matched = new Int32Array(n);
    this.touched = new Int32Array(n);
    const stamp = new Int32Array(n);
    stamp.set(this.stamp);
    this.stamp = stamp;
  }
}

const before = (score: number, slot: number, b: Ranked): boolean => score > b.score || (score === b.score && slot < b.slot);

/** The `limit` best offers kept in order (all of them when `limit` is 0). */
class TopK {
  private readonly kept: Ranked[] = [];

  constructor(private readonly limit: number) {}

  /** Most offers of a merge lose to the page's last: they are turned away before anything is allocated. */
  offer(slot: number, score: number, passes: (slot: number) => boolean): void {
    const full = this.limit > 0 && this.kept.length >= this.limit;
    if (full && !before(score, slot, this.kept[this.kept.length - 1]!)) return;
    if (!passes(slot)) return;
    const c = { slot, score };
    if (!this.limit) {
      this.kept.push(c);
      return;
    }
    let i = this.kept.length;
    while (i > 0 && before(score, slot, this.kept[i - 1]!)) i--;
    this.kept.splice(i, 0, c);
    if (this.kept.length > this.limit) this.kept.pop();
  }

  sorted(): Ranked[] {
    if (!this.limit) this.kept.sort((a, b) => b.score - a.score || a.slot - b.slot);
    return this.kept;
  }
}
