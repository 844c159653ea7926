/**
 * The capability search of `GET /api/v1/search`, of the Bazaar and `/.well-known/x402` lists and
 * of quotes (DESIGN §5 "Discovery"), over the listings the marketplace would send a buyer to: words
 * ranked over name, description, category and tags with MiniSearch, then filtered by asset
 * and by the TOTAL price ceiling (marketplace.md "A price that is the max_price ceiling ... is
 * the TOTAL the buyer pays"). The index lives in memory and catches up from the listing
 * actors' rows, so every marketplace process answers from the same state.
 *
 * Two layers of kept results (ADR 0035): each word's ranked hits, until a listing's words
 * change (a word's score depends on every listing's words); and each whole answer, until any
 * listing changes. A query never seen before but made of known words is a merge of kept
 * hits, not a MiniSearch pass over every listing a common word matches; its page is read
 * from the heads of those hits (ADR 0050), and the asset and ceiling are integer comparisons.
 * Both layers keep a key only from its second sight (ADR 0065): a question or word asked once
 * leaves a fingerprint, not an entry for the collector to promote and sweep.
 */
import MiniSearch, { type SearchOptions } from 'minisearch';
import { parseCeiling, type MarketAsset } from '../../machines/money/market.ts';
import type { ListingRecord } from '../../machines/listing/view.ts';
import type { Listings } from './listings.ts';
import { PriceFilter, type Ceilings, type Under } from './search-prices.ts';
import { heldEntries, Ranker, termHits, type TermHits } from './search-rank.ts';
import { isOneTerm, wordScores } from './search-score.ts';
import { SecondSight } from './second-sight.ts';

interface Doc {
  id: string;
  name: string;
  description: string;
  category: string;
  tags: string;
}

export interface SearchQuery {
  capability?: string | undefined;
  /** A decimal string in the units of each listing's asset: a ceiling on the total. */
  maxPrice?: string | undefined;
  asset?: MarketAsset | undefined;
  limit?: number | undefined;
}

export interface SearchHit {
  record: ListingRecord;
  score: number;
}

const BOOST = { name: 3, tags: 2, category: 2, description: 1 };
const ANSWERS_MAX = 1024;
/** Word hits kept, counted in listings (12 bytes each) with each word's own cost: a bound on memory (some 24 MB). */
const WORD_HITS_MAX = 2_000_000;
/** Answers and words remembered as seen once (4 bytes each): a word may come back in another question much later. */
const ANSWERS_SEEN = 16_384;
const WORDS_SEEN = 65_536;

const tokenize = MiniSearch.getDefault('tokenize') as (text: string) => string[];
const processTerm = MiniSearch.getDefault('processTerm') as (term: string) => string | string[] | null | undefined | false;

/** A capability's words as the index holds them: split on spaces and punctuation, lower case. */
export function queryWords(capability: string): string[] {
  return tokenize(capability).flatMap((t) => {
    const p = processTerm(t);
    return Array.isArray(p) ? p : p ? [p] : [];
  });
}

/**
 * How one word matches: exact, plus prefix from two characters (a one-character prefix
 * matches a good part of any vocabulary and means nothing), plus typos (MiniSearch's 0.2:
 * one edit from three characters, two from eight) only for words with a letter: a number one
 * digit away is another number, not a typo, and numbers are where the typo search is dearest.
 */
export function wordOptions(word: string): SearchOptions & { prefix: boolean; fuzzy: number | false } {
  return { boost: BOOST, prefix: word.length >= 2, fuzzy: /\p{L}/u.test(word) ? 0.2 : false, combineWith: 'OR' };
}

export const SEARCH_FIELDS = ['name', 'description', 'category', 'tags'];
const BOOSTS = SEARCH_FIELDS.map((f) => [f, BOOST[f as keyof typeof BOOST]] as const);

export class SearchIndex {
  private readonly mini = new MiniSearch<Doc>({ fields: SEARCH_FIELDS, idField: 'id' });
  /** Listings by slot, in the order first seen; a slot is kept when a listing changes. */
  private readonly slotOf = new Map<string, number>();
  private readonly records: ListingRecord[] = [];
  private readonly texts: string[] = [];
  private readonly prices = new PriceFilter();
  private readonly words = new Map<string, TermHits>();
  private wordHitsHeld = 0;
  private readonly answers = new Map<string, readonly SearchHit[]>();
  private readonly answersSeen = new SecondSight(ANSWERS_SEEN);
  private readonly wordsSeen = new SecondSight(WORDS_SEEN);
  private changes = 0;
  private readonly ranker = new Ranker();
  private since: Date | null = null;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly listings: Listings) {}

  upsert(r: ListingRecord): void {
    let slot = this.slotOf.get(r.resource_id);
    const json = JSON.stringify(r).slice(0, -1);
    // The catch-up reads the newest listing again on every turn: an unchanged one keeps everything.
    if (slot !== undefined && openJson.get(this.records[slot]!) === json) return;
    openJson.set(r, json);
    const doc = { id: r.resource_id, name: r.name, description: r.description, category: r.category, tags: r.tags.join(' ') };
    const text = JSON.stringify([doc.name, doc.description, doc.category, doc.tags]);
    if (slot === undefined) {
      slot = this.records.length;
      this.slotOf.set(r.resource_id, slot);
    }
    if (this.texts[slot] !== text) {
      // A scan or a sale leaves the words alone; only new words re-rank (BM25 weighs every listing's).
      if (this.mini.has(r.resource_id)) this.mini.discard(r.resource_id);
      this.mini.add(doc);
      this.texts[slot] = text;
      this.words.clear();
      this.wordHitsHeld = 0;
    }
    this.records[slot] = r;
    // Held out of every answer (search, Bazaar, /.well-known/x402, quotes) while its endpoint's own
    // 402 pays someone else: decided here, once per change, so a question pays nothing for it (ADR 0080).
    this.prices.set(slot, payeeDisowned(r) ? [] : r.accepted_assets);
    this.answers.clear();
    this.changes++;
  }

  /** Counts the listings' changes: an answer derived while it had one value is current while it keeps it. */
  get generation(): number {
    return this.changes;
  }

  get size(): number {
    return this.records.length;
  }

  /**
   * One listing by id as the index holds it, else as stored: one registered through another
   * process may be here only from the next catch-up. Null: no such listing.
   */
  async listing(resourceId: string): Promise<ListingRecord | null> {
    const slot = this.slotOf.get(resourceId);
    return slot === undefined ? this.listings.byId(resourceId) : this.records[slot]!;
  }

  /** Reads the listings changed since the last catch-up (all of them the first time). */
  async refresh(): Promise<void> {
    const { records, newest } = await this.listings.changedSince(this.since);
    for (const r of records) this.upsert(r);
    this.since = newest;
  }

  /** Catches up every `ms` until stopped; a failed read is retried on the next turn. */
  start(ms = 1000): void {
    const tick = (): void => {
      this.timer = setTimeout(() => void this.refresh().catch(() => undefined).finally(() => this.timer && tick()), ms);
      this.timer.unref();
    };
    tick();
  }

  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  /**
   * Ranked hits under the ceilings, best first (equal scores: the listing seen first). The
   * array is shared with later callers until a listing changes, never to be changed; its
   * identity may key what a caller derives from it.
   */
  search(q: SearchQuery): readonly SearchHit[] {
    const words = q.capability?.trim() ? queryWords(q.capability) : null;
    const ceilings = ceilingsOf(q.maxPrice);
    const limit = q.limit ?? 0;
    const filters = [ceilings && [String(ceilings.USDC), String(ceilings.ANM)], q.asset ?? null, limit];
    const asked = JSON.stringify([words, ...filters]);
    let key = asked;
    const kept = this.kept(key);
    if (kept) return kept;
    let hits: SearchHit[];
    if (words === null) hits = this.all(this.prices.under(ceilings, q.asset), limit);
    else {
      const times = new Map<string, number>();
      for (const w of words) times.set(w, (times.get(w) ?? 0) + 1);
      const matched = [...times].map(([w, n]) => ({ word: w, hits: this.hitsOf(w), times: n })).filter((m) => m.hits.slots.length > 0);
      if (matched.length < times.size) {
        // A word no listing holds (not even by prefix or typo) adds nothing to any score nor to
        // any listing's count of matched words: the answer is the one without it, and so is the
        // kept answer it may already have (ADR 0096).
        const holds = new Set(matched.map((m) => m.word));
        key = JSON.stringify([words.filter((w) => holds.has(w)), ...filters]);
        const same = this.kept(key);
        if (same) return same;
      }
      hits = this.ranked(matched, this.prices.under(ceilings, q.asset), limit);
    }
    // A question asked again is kept under its words that match, as is one whose words that match were asked before.
    let again = this.answersSeen.seenBefore(key);
    if (key !== asked && this.answersSeen.seenBefore(asked)) again = true;
    if (!again) return hits;
    if (this.answers.size >= ANSWERS_MAX) this.answers.delete(this.answers.keys().next().value!);
    this.answers.set(key, hits);
    return hits;
  }

  /** The kept answer to a question's key, made the newest. */
  private kept(key: string): readonly SearchHit[] | undefined {
    const kept = this.answers.get(key);
    if (kept) {
      this.answers.delete(key);
      this.answers.set(key, kept);
    }
    return kept;
  }

  /** No words: every listing under the ceilings, in the order first seen. */
  private all(pass: Under, limit: number): SearchHit[] {
    const out: SearchHit[] = [];
    for (let s = 0; s < this.records.length && (!limit || out.length < limit); s++) if (pass.has(s)) out.push({ record: this.records[s]!, score: 0 });
    return out;
  }

  private ranked(matched: ReadonlyArray<{ hits: TermHits; times: number }>, pass: Under, limit: number): SearchHit[] {
    const out: SearchHit[] = [];
    if (!matched.length) return out;
    for (const r of this.ranker.rank(matched, this.records.length, limit, pass)) out.push({ record: this.records[r.slot]!, score: r.score });
    return out;
  }

  /** One word's hits over every listing, kept from its second sight until a listing's words change. */
  private hitsOf(word: string): TermHits {
    const kept = this.words.get(word);
    if (kept) {
      this.words.delete(word);
      this.words.set(word, kept);
      return kept;
    }
    const hits = termHits(this.scored(word), this.records.length);
    if (!this.wordsSeen.seenBefore(word)) return hits;
    this.words.set(word, hits);
    this.wordHitsHeld += heldEntries(hits);
    for (const [w, h] of this.words) {
      if (this.wordHitsHeld <= WORD_HITS_MAX || w === word) break;
      this.words.delete(w);
      this.wordHitsHeld -= heldEntries(h);
    }
    return hits;
  }

  /**
   * One word's score per listing: MiniSearch's for a query of that one word (search-score.ts,
   * ADR 0096); for a word MiniSearch would split or change, its `executeQuery` (what `search`
   * calls before it shapes and sorts results, and multiplies each score by the number of query
   * words matched, 1 for one word).
   */
  private scored(word: string): Array<{ slot: number; score: number }> {
    const mini = this.mini as unknown as MiniInternals;
    const options = wordOptions(word);
    const out: Array<{ slot: number; score: number }> = [];
    const scores = isOneTerm(word) ? wordScores(mini, word, options, BOOSTS) : null;
    if (scores) {
      for (const [short, score] of scores) out.push({ slot: this.slotOf.get(String(mini._documentIds.get(short)))!, score });
      return out;
    }
    for (const [short, r] of mini.executeQuery(word, options)) {
      out.push({ slot: this.slotOf.get(String(mini._documentIds.get(short)))!, score: r.score * (r.terms.length || 1) });
    }
    return out;
  }
}

/** What `scored` reads of MiniSearch 7 beyond its typed API. */
interface MiniInternals {
  executeQuery(query: string, options: SearchOptions): Map<number, { score: number; terms: string[] }>;
  _documentIds: Map<number, unknown>;
}

/**
 * Each listing record's JSON without its closing brace, written when the index takes the
 * record: what tells an unchanged record on the catch-up, and what an answer's body is made
 * of, so that a question that brings a listing to a page for the first time does not
 * serialize it on the request path (ADR 0096).
 */
const openJson = new WeakMap<ListingRecord, string>();

/** A record's JSON without its closing brace: kept for the records the index holds. */
export function openRecordJson(r: ListingRecord): string {
  let j = openJson.get(r);
  if (j === undefined) openJson.set(r, (j = JSON.stringify(r).slice(0, -1)));
  return j;
}

/** The newest probe found the endpoint's 402 paying another payee than the listing's (ADR 0071). */
export function payeeDisowned(r: ListingRecord): boolean {
  return r.recent_scans[0]?.outcome === 'pay_to_mismatch';
}

/** Ceilings by `max_price` text: agents ask a few prices again and again, and two decimal parses to bigints were a twentieth of a new question (ADR 0096). */
const ceilingsKept = new Map<string, Ceilings>();
const CEILINGS_KEPT = 256;

/** The ceiling in each asset's atomic units, compared by value (places beyond an asset's are floored away), or null for none. */
function ceilingsOf(maxPrice: string | undefined): Ceilings | null {
  if (maxPrice === undefined) return null;
  let c = ceilingsKept.get(maxPrice);
  if (c === undefined) {
    if (ceilingsKept.size >= CEILINGS_KEPT) ceilingsKept.clear();
    ceilingsKept.set(maxPrice, (c = { USDC: parseCeiling('USDC', maxPrice), ANM: parseCeiling('ANM', maxPrice) }));
  }
  return c;
}
