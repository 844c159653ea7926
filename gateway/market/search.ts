/**
 * Discovery (DESIGN §5 "Discovery"): free and unauthenticated. Capability search, the
 * marketplace's own description, and x402scan's `/.well-known/x402`; the Bazaar's
 * `/discovery/*` are in discovery.ts.
 */
import type { FastifyPluginAsync } from 'fastify';
import { z } from 'zod';
import { MARKET_FEE_BPS, MARKET_LANES, maxPriceAccepted } from '../../machines/money/market.ts';
import { laneNetwork } from '../../runtime/market/requirements.ts';
import { openRecordJson, type SearchHit, type SearchIndex } from '../../runtime/market/search-index.ts';
import { SecondSight } from '../../runtime/market/second-sight.ts';
import { JSON_TYPE, sendJson } from '../http/reply.ts';
import { baseUrl } from './base-url.ts';
import type { MarketDeps } from './deps.ts';
import { parseQuery } from './query.ts';

const asset = z.enum(['USDC', 'ANM']);
export const searchQuery = z
  .strictObject({
    capability: z.string().max(500).optional(),
    max_price: z.string().max(100).optional(),
    asset: asset.optional(),
    limit: z.coerce.number().int().min(1).max(100).default(20),
  })
  .refine((q) => q.max_price === undefined || maxPriceAccepted(q.asset, q.max_price), {
    path: ['max_price'],
    message: 'a decimal string greater than zero, with no more places than the asset has (9 with no asset named)',
  });

type SearchParams = z.infer<typeof searchQuery>;
const LIMIT = /^(?:[1-9][0-9]?|100)$/;

/**
 * A query string's fields checked by hand when each is a single value in its plainest form
 * (a limit of 1 to 100 in digits, without sign, space or leading zero): exactly what
 * `searchQuery` gives for it, without zod's pass, which was a tenth of a new question's cost
 * (ADR 0096). Anything else (an unknown or repeated field, another form of a number, a value
 * too long, a ceiling refused) is undefined, and zod checks it and words its refusal.
 * search-equivalence.test.ts holds the two equal over generated query strings.
 */
export function plainSearchQuery(query: unknown): SearchParams | undefined {
  if (typeof query !== 'object' || query === null) return undefined;
  const q = query as Record<string, unknown>;
  const out: SearchParams = { limit: 20 };
  for (const key of Object.keys(q)) {
    const v = q[key];
    if (typeof v !== 'string') return undefined;
    if (key === 'capability' && v.length <= 500) out.capability = v;
    else if (key === 'max_price' && v.length <= 100) out.max_price = v;
    else if (key === 'asset' && (v === 'USDC' || v === 'ANM')) out.asset = v;
    else if (key === 'limit' && LIMIT.test(v)) out.limit = Number(v);
    else return undefined;
  }
  return out.max_price === undefined || maxPriceAccepted(out.asset, out.max_price) ? out : undefined;
}

/**
 * The body of a search answer. An answer served for the first time is a string: a body of ten
 * records is some fifteen kilobytes, and as a Buffer of its own each was an allocation outside
 * V8's heap (malloc, page faults, a free on V8's sweeper thread) that cost a new question more
 * CPU than its ranking did (ADR 0061); a string lives in the young generation, dies there, and
 * Node encodes it into its write buffer. The index keeps an answer (the same array) until a
 * listing changes; its body is kept with it as bytes from the second time it is served, so
 * repeats write the same Buffer: most new questions are asked once, and keeping their bodies
 * would grow the memory outside the heap that V8 answers with full collections. One more hit
 * than the page is asked for, to tell `has_more`.
 */
const bodies = new WeakMap<readonly SearchHit[], Buffer | null>();
function searchBody(hits: readonly SearchHit[], limit: number): Buffer | string {
  const kept = bodies.get(hits);
  if (kept) return kept;
  const n = Math.min(limit, hits.length);
  let body = '{"object":"list","data":[';
  for (let i = 0; i < n; i++) {
    const h = hits[i]!;
    body += `${i > 0 ? ',' : ''}${openRecordJson(h.record)},"relevance":${JSON.stringify(h.score)}}`;
  }
  body += hits.length > limit ? '],"has_more":true}' : '],"has_more":false}';
  if (kept === undefined) {
    bodies.set(hits, null);
    return body;
  }
  const bytes = Buffer.from(body);
  bodies.set(hits, bytes);
  return bytes;
}

/** Query strings kept with their answers; oldest out. */
const QUERIES_KEPT = 1024;
/** Query strings remembered as asked once (4 bytes each), so that the second ask keeps its answer. */
const QUERIES_SEEN = 16_384;

/**
 * The body for a search request: its URL (the kept key) and its parsed query string.
 * A query string answered while the listings had this generation is the same valid question
 * with the same answer while they keep it: agents repeat theirs, and for a kept answer its
 * check and the index's normalised key cost more than the rest of the handler. Only strings
 * that passed the check are kept, and only from their second ask (ADR 0065): a string asked
 * once would otherwise hold its entry, answer and URL for a thousand questions.
 */
export function searchAnswers(index: SearchIndex): (url: string, query: unknown) => Buffer | string {
  const asked = new Map<string, { generation: number; hits: readonly SearchHit[]; limit: number }>();
  const sight = new SecondSight(QUERIES_SEEN);
  return (url, query) => {
    const generation = index.generation;
    let a = asked.get(url);
    if (a === undefined || a.generation !== generation) {
      const q = plainSearchQuery(query) ?? parseQuery(searchQuery, query);
      const known = a !== undefined || sight.seenBefore(url);
      a = { generation, limit: q.limit, hits: index.search({ capability: q.capability, maxPrice: q.max_price, asset: q.asset, limit: q.limit + 1 }) };
      if (known) {
        if (asked.size >= QUERIES_KEPT && !asked.has(url)) asked.delete(asked.keys().next().value!);
        asked.set(url, a);
      }
    }
    return searchBody(a.hits, a.limit);
  };
}

const search: FastifyPluginAsync<{ deps: MarketDeps }> = async (app, { deps }) => {
  const answer = searchAnswers(deps.index);
  app.get('/api/v1/search', async (req, reply) => {
    void reply.code(200).type(JSON_TYPE).send(answer(req.url, req.query));
  });

  app.get('/.well-known/x402-marketplace', async (req, reply) => {
    const base = baseUrl(deps, req);
    sendJson(reply, 200, {
      name: 'ANM Pay marketplace',
      version: '1',
      x402Version: 2,
      fee_bps: MARKET_FEE_BPS,
      fee_rule: 'ceil(seller_price * 50 / 10000), at least 1 atomic unit; total = seller_price + fee',
      lanes: (['USDC', 'ANM'] as const).map((a) => ({
        asset: a,
        network: laneNetwork(a, deps.usdc.token),
        scheme: MARKET_LANES[a].scheme,
        leg_scheme: MARKET_LANES[a].legScheme,
        fee_address: deps.feeAddresses[a],
        // The token legs are signed for: its contract and EIP-712 domain (USDC_TOKEN_*, USDC_NETWORK).
        ...(a === 'USDC' && { token: { address: deps.usdc.token.address, name: deps.usdc.token.name, version: deps.usdc.token.version, chain_id: deps.usdc.token.chainId, decimals: 6 } }),
      })),
      endpoints: {
        resources: `${base}/api/v1/resources`,
        search: `${base}/api/v1/search`,
        quote: `${base}/api/v1/route/quote`,
        purchase: `${base}/api/v1/purchase`,
        execute: `${base}/api/v1/route/execute`,
        facilitator: `${base}/facilitator`,
        discovery: `${base}/discovery/resources`,
      },
    });
  });

  app.get('/.well-known/x402', async (_req, reply) => {
    sendJson(reply, 200, { version: 1, resources: deps.index.search({}).map((h) => h.record.endpoint) });
  });
};

export default search;
