/**
 * `npm run bench:search`: the node CPU of one search whose question was never asked before,
 * over BENCH_LISTINGS listings (default 10,000) built as bench:market builds them, in this
 * process alone (no database, no sockets), so that it can run beside other work: it reports
 * CPU time per search (process.cpuUsage), not a wall-clock rate. Rows:
 * - `index, known words`: `SearchIndex.search` for new combinations of words the index has
 *   seen asked (their ranked hits are kept), with various max_price, asset and limit;
 * - `route, known words`: the same questions as `GET /api/v1/search` answers them past
 *   Fastify (the query check, the kept query strings, the body), and again at limit 10;
 * - `route, new number` and `route, new p-word`: bench:market's two "each query new" forms,
 *   `weather+<n>` and `weather+p<n>`, where one word is new to the index every time;
 * - `route, new typo of a word`: a one-edit typo of a listing word (`wexther`), which bench:market
 *   does not ask: its typo matches the word a tenth of the listings hold, all scored the first
 *   time (BENCH_OPS / 20 a round: each costs milliseconds).
 * Each row is the median of BENCH_ROUNDS rounds (default 5) of BENCH_OPS questions (default 4,000).
 * BENCH_ONLY=<text>: only the rows whose name holds it (`new number`).
 * BENCH_PROFILE=<file>: a V8 CPU profile of the measured rows (not the index's build) written
 * to <file> (.cpuprofile, for Chrome's DevTools), and its functions by self time printed.
 */
import { writeFileSync } from 'node:fs';
import { Session, type Profiler } from 'node:inspector';
import { parse } from 'node:querystring';
import type { ListingContext } from '../../machines/listing/context.ts';
import { listingRecord } from '../../machines/listing/view.ts';
import { searchAnswers } from '../../gateway/market/search.ts';
import type { Listings } from '../../runtime/market/listings.ts';
import { SearchIndex, type SearchQuery } from '../../runtime/market/search-index.ts';

const LISTINGS = Number(process.env.BENCH_LISTINGS ?? 10_000);
const OPS = Number(process.env.BENCH_OPS ?? 4_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const WORDS = ['weather', 'translate', 'geocode', 'sentiment', 'images', 'stocks', 'news', 'ocr', 'speech', 'search'];
/** Words the listings hold besides WORDS: every name has `service`, every description `api number`, tags `t0`..`t96`. */
const VOCAB = [...WORDS, 'service', 'api', 'number', ...Array.from({ length: 97 }, (_, i) => `t${i}`), ...Array.from({ length: 40 }, (_, i) => String(i * 250 + 7))];
const PRICES = [undefined, '0.01', '0.0105', '0.011', '0.02', '0.6', '1'];
const ASSETS = [undefined, undefined, 'USDC', 'ANM'] as const;

function build(): SearchIndex {
  const index = new SearchIndex({} as Listings);
  for (let i = 0; i < LISTINGS; i++) {
    const word = WORDS[i % WORDS.length]!;
    const ctx = {
      resource_id: `res_${i}`, provider_id: 'prov_b0b0', name: `${word} service ${i}`, description: `A ${word} API number ${i}`, category: word, tags: [word, `t${i % 97}`],
      endpoint: `https://seller${i}.example/api`, method: 'GET', model: 'per_call',
      assets: [
        { asset: 'USDC', pay_to: '0x00000000000000000000000000000000000b0b00', seller_price_atomic: String(10_000 + (i % 1000)) },
        { asset: 'ANM', pay_to: 'anm1seller', seller_price_atomic: String(500_000_000 + i) },
      ],
      documentation_url: null, request_schema: null, response_schema: null, example_request: null, example_response: null, created_at: 0, scans: [], transactions: 0,
    } as unknown as ListingContext;
    index.upsert(listingRecord(ctx, 'unverified'));
  }
  return index;
}

/** A deterministic stream of questions, none asked twice (seeded, so rounds before and after a change ask the same). */
function* questions(seed: number): Generator<SearchQuery & { limit: number }> {
  let s = seed >>> 0 || 1;
  const rnd = (n: number): number => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) % n;
  };
  const seen = new Set<string>();
  for (;;) {
    const n = 1 + rnd(3);
    const capability = Array.from({ length: n }, () => VOCAB[rnd(VOCAB.length)]!).join(' ');
    const q = { capability, maxPrice: PRICES[rnd(PRICES.length)], asset: ASSETS[rnd(ASSETS.length)], limit: 1 + rnd(50) };
    const key = JSON.stringify(q);
    if (seen.has(key)) continue;
    seen.add(key);
    yield q;
  }
}

/** The i-th one-edit typo of a capability word: a letter replaced, inserted or deleted. */
function typo(i: number): string {
  const w = WORDS[i % WORDS.length]!;
  const j = Math.floor(i / WORDS.length);
  const at = j % w.length;
  const c = String.fromCharCode(97 + (Math.floor(j / w.length) % 26));
  return [w.slice(0, at) + c + w.slice(at + 1), w.slice(0, at) + c + w.slice(at), w.slice(0, at) + w.slice(at + 1)][j % 3]!;
}

const url = (q: SearchQuery & { limit: number }): string => {
  const p = new URLSearchParams({ capability: q.capability!, limit: String(q.limit) });
  if (q.maxPrice) p.set('max_price', q.maxPrice);
  if (q.asset) p.set('asset', q.asset);
  // The route refuses a ceiling with more places than the asset has; these have at most 4.
  return `/api/v1/search?${p.toString()}`;
};

/** CPU µs per call of `f` over `items`, median of the rounds; each round gets items of its own. */
function cpuPer<T>(rounds: T[][], f: (item: T) => unknown): number {
  const per: number[] = [];
  for (const items of rounds) {
    const t0 = process.cpuUsage();
    for (const item of items) f(item);
    const t = process.cpuUsage(t0);
    per.push((t.user + t.system) / items.length);
  }
  per.sort((a, b) => a - b);
  return per[Math.floor(per.length / 2)]!;
}

const index = build();
const answer = searchAnswers(index);
const route = (u: string): Buffer | string => answer(u, parse(u.slice(u.indexOf('?') + 1)));
// Every known word asked once, so that its ranked hits are kept, as in a service that has run a while.
for (const w of VOCAB) index.search({ capability: w });
const gen = questions(20);
const next = (): SearchQuery & { limit: number } => gen.next().value as SearchQuery & { limit: number };
// Warm-up: the JIT, and the records' kept bytes.
for (let i = 0; i < 3_000; i++) route(url(next()));
const rounds = <T>(n: number, f: (i: number) => T): T[][] => Array.from({ length: ROUNDS }, (_, r) => Array.from({ length: n }, (_, i) => f(r * n + i)));

const PROFILE = process.env.BENCH_PROFILE;
const session = new Session();
const post = <T>(method: string, params?: object): Promise<T> =>
  new Promise((resolve, reject) => session.post(method, params, (err, r) => (err ? reject(err) : resolve(r as T))));
if (PROFILE) {
  session.connect();
  await post('Profiler.enable');
  await post('Profiler.setSamplingInterval', { interval: 50 });
  await post('Profiler.start');
}

const rows: Array<[string, () => number]> = [
  ['index, known words', () => cpuPer(rounds(OPS, next), (q) => index.search({ ...q, limit: q.limit + 1 }))],
  ['route, known words', () => cpuPer(rounds(OPS, () => url(next())), route)],
  ['route, known words, limit 10', () => cpuPer(rounds(OPS, () => url({ ...next(), limit: 10 })), route)],
  ['route, new number (weather+<n>)', () => cpuPer(rounds(Math.floor(LISTINGS / ROUNDS), (i) => `/api/v1/search?capability=${WORDS[i % WORDS.length]!}+${i}&max_price=0.02&limit=10`), route)],
  ['route, new p-word (weather+p<n>)', () => cpuPer(rounds(OPS, (i) => `/api/v1/search?capability=${WORDS[i % WORDS.length]!}+p${i}&max_price=0.02&limit=10`), route)],
  ['route, new typo of a word (wexther)', () => cpuPer(rounds(Math.ceil(OPS / 20), (i) => `/api/v1/search?capability=${typo(i)}&max_price=0.02&limit=10`), route)],
];
const ONLY = process.env.BENCH_ONLY;
process.stdout.write(`${LISTINGS} listings, ${ROUNDS} rounds of ${OPS}; CPU µs per search, median round\n`);
for (const [name, f] of rows) if (!ONLY || name.includes(ONLY)) process.stdout.write(`${name.padEnd(36)} ${f().toFixed(1).padStart(8)} µs\n`);

if (PROFILE) {
  const { profile } = await post<{ profile: Profiler.Profile }>('Profiler.stop');
  writeFileSync(PROFILE, JSON.stringify(profile));
  printSelfTimes(profile);
}

/** The profile's functions by self time, the 30 largest, as shares of all samples. */
function printSelfTimes(profile: Profiler.Profile): void {
  const hits = new Map<string, number>();
  let total = 0;
  for (const n of profile.nodes) {
    const f = n.callFrame;
    const at = `${f.functionName || '(anonymous)'} ${f.url.split('/').slice(-2).join('/')}:${f.lineNumber + 1}`;
    hits.set(at, (hits.get(at) ?? 0) + (n.hitCount ?? 0));
    total += n.hitCount ?? 0;
  }
  for (const [at, n] of [...hits].sort((a, b) => b[1] - a[1]).slice(0, 30)) process.stdout.write(`${((100 * n) / total).toFixed(1).padStart(5)} %  ${at}\n`);
}
