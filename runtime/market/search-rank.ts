/**
 * Ranking arithmetic of the search index, apart from MiniSearch and the catch-up: a query's
 * words are scored one by one (MiniSearch's BM25 with the boosts, prefix and fuzzy weights),
 * and a query of several words sums them and multiplies by how many distinct words matched,
 * which is what MiniSearch's own `combineWith: 'OR'` does. Scoring word by word lets each
 * word's hits be kept across queries: agents ask new combinations of the same few words.
 */

/** One word's hits, best first (ties: the older listing first), and its score by slot. */
export interface TermHits {
  slots: Int32Array;
  scores: Float64Array;
  /** The number of slots the word's lookup covers. */
  size: number;
  /**
   * The lookup, built the first time the word is the longest of a question (most new words are
   * rare and never are). A word that many listings hold: its score per slot, NaN where it has
   * none; else its hits in slot order, for a binary search.
   */
  lookup: { dense: Float64Array; slotsAsc: Int32Array; scoresAsc: Float64Array } | null;
}

/** From this share of the listings on, a word's scores by slot are a dense array: 8 bytes a listing against 12 a hit. */
const DENSE_SHARE = 1 / 16;

const dense = (h: TermHits): boolean => h.slots.length >= h.size * DENSE_SHARE;

/** `capacity`: the number of slots, for the dense lookup of a common word. */
export function termHits(pairs: Array<{ slot: number; score: number }>, capacity = 0): TermHits {
  let size = capacity;
  for (const p of pairs) size = Math.max(size, p.slot + 1);
  pairs.sort((a, b) => b.score - a.score || a.slot - b.slot);
  return { slots: Int32Array.from(pairs, (p) => p.slot), scores: Float64Array.from(pairs, (p) => p.score), size, lookup: null };
}

/**
 * What a kept word costs in memory besides its hits: its entry in the kept map, its key, its
 * hits object and typed arrays, some 500 bytes on the heap measured (ADR 0061), in 12-byte
 * hits. Counted as nothing, a stream of one-off words that match a listing or two was kept
 * almost without bound.
 */
export const WORD_OVERHEAD_ENTRIES = 40;

/** How many listing entries a word's hits may hold in memory, counted as 12-byte hits: its lookup counted as built, and the word's own cost. */
export function heldEntries(h: TermHits): number {
  return WORD_OVERHEAD_ENTRIES + h.slots.length + (dense(h) ? Math.ceil((h.size * 8) / 12) : h.slots.length);
}

function lookupOf(h: TermHits): NonNullable<TermHits['lookup']> {
  const n = h.slots.length;
  if (dense(h)) {
    const at = new Float64Array(h.size).fill(NaN);
    for (let i = 0; i < n; i++) at[h.slots[i]!] = h.scores[i]!;
    return { dense: at, slotsAsc: new Int32Array(0), scoresAsc: new Float64Array(0) };
  }
  const order = Array.from({ length: n }, (_, i) => i).sort((a, b) => h.slots[a]! - h.slots[b]!);
  return { dense: new Float64Array(0), slotsAsc: Int32Array.from(order, (i) => h.slots[i]!), scoresAsc: Float64Array.from(order, (i) => h.scores[i]!) };
}

/** The word's score for one listing, NaN if the listing does not hold it. */
export function scoreAt(h: TermHits, slot: number): number {
  const l = (h.lookup ??= lookupOf(h));
  if (l.dense.length) return slot < l.dense.length ? l.dense[slot]! : NaN;
  const slots = l.slotsAsc;
  let lo = 0;
  let hi = slots.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (slots[mid]! < slot) lo = mid + 1;
    else hi = mid;
  }
  return lo < slots.length && slots[lo] === slot ? l.scoresAsc[lo]! : NaN;
}

/** Which listings may enter a page (the asset and price ceiling). */
export interface Pass {
  has(slot: number): boolean;
}

export interface Ranked {
  slot: number;
  score: number;
}

/**
 * The best `limit` slots (all when `limit` is 0) that `pass` has, best first, ties by slot.
 * Candidates are compared on score before `pass` is asked, so a ceiling is checked only
 * for the few that could enter the page.
 *
 * A page of several words does not add up every hit of every word. The words are summed
 * shortest list first, the same order for every listing, so the longest list comes last: the
 * other words' hits are merged, each given the longest word's share by a lookup, and the
 * listings that only the longest word holds are taken from its list in order, which is their
 * final order too (one word matched: the score is that word's). That walk stops at the first
 * hit that scores under the page's last, and skips the rest of a run of equal scores once its
 * slots come after the page's last: a common word's thousands of hits are mostly never read.
 */
export class Ranker {
  private acc = new Float64Array(0);
  private matched = new Int32Array(0);
  private stamp = new Int32Array(0);
  /** The slots a merge touched, in first-touch order: reused across queries, as the sums are. */
  private touched = new Int32Array(0);
  private gen = 0;

  /** `words`: each distinct word's hits and how many times the query names it. */
  rank(words: ReadonlyArray<{ hits: TermHits; times: number }>, capacity: number, limit: number, pass: Pass): Ranked[] {
    const only = words.length === 1 ? words[0] : undefined;
    if (only) return this.single(only.hits, only.times, limit, pass);
    this.grow(capacity);
    // A stamp is an Int32: start the generations over before they would wrap.
    if (this.gen === 0x7fffffff) {
      this.stamp.fill(0);
      this.gen = 0;
    }
    const gen = ++this.gen;
    const order = [...words].sort((a, b) => a.hits.slots.length - b.hits.slots.length);
    const longest = order[order.length - 1]!;
    const page = new TopK(limit);
    if (limit && order.length === 2) {
      this.pair(order[0]!, longest, gen, page, pass);
      this.walk(longest.hits, longest.times, gen, page, pass);
      return page.sorted();
    }
    const n = this.merge(limit ? order.slice(0, -1) : order, gen);
    const { acc, matched, touched } = this;
    for (let i = 0; i < n; i++) {
      const s = touched[i]!;
      if (limit) {
        const v = scoreAt(longest.hits, s);
        if (v === v) {
          acc[s] = acc[s]! + longest.times * v;
          matched[s] = matched[s]! + 1;
        }
      }
      page.offer(s, acc[s]! * matched[s]!, pass);
    }
    if (limit) this.walk(longest.hits, longest.times, gen, page, pass);
    return page.sorted();
  }

  /**
   * Two words: the shorter one's hits, each with the longer one's share, offered as they are
   * read (the sums and their order as `merge` gives them, without its per-slot arrays); a
   * listing the longer word holds too is stamped, so that `walk` passes it by. The shorter
   * list is read best first, so no hit after the i-th scores more than its own score plus the
   * longer word's best, twice: once that is under the page's last, the rest is left unread
   * (a listing left there that the longer word holds scores less again in `walk`, which then
   * turns it away), and a run of equal scores is passed over once its slots come after the
   * page's last.
   */
  private pair(short: { hits: TermHits; times: number }, long: { hits: TermHits; times: number }, gen: number, page: TopK, pass: Pass): void {
    const { slots, scores } = short.hits;
    const stamp = this.stamp;
    const best = long.times * long.hits.scores[0]!;
    for (let i = 0; i < slots.length; ) {
      const s = slots[i]!;
      const own = short.times * scores[i]!;
      const bound = (own + best) * 2;
      if (bound < page.floorScore) return;
      if (bound === page.floorScore && s > page.floorSlot) {
        const run = scores[i]!;
        while (i < slots.length && scores[i] === run) i++;
        continue;
      }
      const v = scoreAt(long.hits, s);
      if (v === v) {
        stamp[s] = gen;
        page.offer(s, (own + long.times * v) * 2, pass);
      } else page.offer(s, own, pass);
      i++;
    }
  }

  /** Adds the words' hits into the sums, in the words' order; returns how many slots it touched. */
  private merge(words: ReadonlyArray<{ hits: TermHits; times: number }>, gen: number): number {
    const { acc, matched, stamp, touched } = this;
    let n = 0;
    for (const { hits, times } of words) {
      for (let i = 0; i < hits.slots.length; i++) {
        const s = hits.slots[i]!;
        if (stamp[s] !== gen) {
          stamp[s] = gen;
          acc[s] = 0;
          matched[s] = 0;
          touched[n++] = s;
        }
        acc[s] = acc[s]! + times * hits.scores[i]!;
        matched[s] = matched[s]! + 1;
      }
    }
    return n;
  }

  /**
   * The listings only the longest word holds, in its order: each scores `times` × its score
   * (`0 + x` is x, and one word matched multiplies by 1), never more than the hit before it.
   */
  private walk(hits: TermHits, times: number, gen: number, page: TopK, pass: Pass): void {
    const { slots, scores } = hits;
    const stamp = this.stamp;
    for (let i = 0; i < slots.length; ) {
      const s = slots[i]!;
      if (stamp[s] === gen) {
        i++;
        continue;
      }
      const score = times * scores[i]!;
      if (score < page.floorScore) return;
      if (score === page.floorScore && s > page.floorSlot) {
        // The rest of this run of equal scores has later slots still: none of it enters.
        const run = scores[i]!;
        while (i < slots.length && scores[i] === run) i++;
        continue;
      }
      page.offer(s, score, pass);
      i++;
    }
  }

  /** One word: its hits are already in order, so the page is the first that pass. */
  private single(hits: TermHits, times: number, limit: number, pass: Pass): Ranked[] {
    const out: Ranked[] = [];
    for (let i = 0; i < hits.slots.length && (!limit || out.length < limit); i++) {
      const s = hits.slots[i]!;
      if (pass.has(s)) out.push({ slot: s, score: times * hits.scores[i]! });
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

/** The `limit` best offers kept in order (all of them when `limit` is 0). */
class TopK {
  private readonly kept: Ranked[] = [];
  /** The page's last once the page is full, what an offer must beat; below every score until then. */
  floorScore = -Infinity;
  floorSlot = 0;

  constructor(private readonly limit: number) {}

  /** Most offers of a merge lose to the page's last: they are turned away before anything is allocated. */
  offer(slot: number, score: number, pass: Pass): void {
    if (score < this.floorScore || (score === this.floorScore && slot > this.floorSlot)) return;
    if (!pass.has(slot)) return;
    const c = { slot, score };
    if (!this.limit) {
      this.kept.push(c);
      return;
    }
    const kept = this.kept;
    let i = kept.length;
    while (i > 0 && (score > kept[i - 1]!.score || (score === kept[i - 1]!.score && slot < kept[i - 1]!.slot))) i--;
    kept.splice(i, 0, c);
    if (kept.length > this.limit) kept.pop();
    if (kept.length === this.limit) {
      this.floorScore = kept[kept.length - 1]!.score;
      this.floorSlot = kept[kept.length - 1]!.slot;
    }
  }

  sorted(): Ranked[] {
    if (!this.limit) this.kept.sort((a, b) => b.score - a.score || a.slot - b.slot);
    return this.kept;
  }
}
