/**
 * The x402 Bazaar discovery API (DESIGN §5 "Discovery"), as `@x402/extensions`'
 * `withBazaar(new HTTPFacilitatorClient({url}))` reads it: `listResources()` at
 * `<url>/discovery/resources`, `search()` at `<url>/discovery/search`. Both are served at the
 * root and under `/facilitator`, the URL sellers point their facilitator client at, so one client
 * settles and discovers (issue 20).
 */
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { ListingRecord } from '../../machines/listing/view.ts';
import { samePayee } from '../../machines/listing/rules.ts';
import { fromV1Network, sellerRequirement, v1NetworkName } from '../../runtime/market/requirements.ts';
import type { UsdcToken } from '../../runtime/market/lanes/usdc-ledger.ts';
import { sendJson } from '../http/reply.ts';
import { baseUrl } from './base-url.ts';
import type { MarketDeps } from './deps.ts';
import { parseQuery } from './query.ts';

const filters = {
  type: z.string().max(50).optional(),
  network: z.string().max(100).optional(),
  scheme: z.string().max(100).optional(),
  payTo: z.string().max(200).optional(),
  extensions: z.string().max(200).optional(),
};

const listQuery = z.object({
  ...filters,
  limit: z.coerce.number().int().min(1).max(1000).default(100),
  offset: z.coerce.number().int().min(0).default(0),
});

/** The client calls `limit` and `cursor` advisory: a larger limit is served as the largest page. */
const SEARCH_PAGE_MAX = 100;
const searchQuery = z.object({
  ...filters,
  query: z.string().max(500),
  limit: z.coerce.number().int().min(1).default(20).transform((n) => Math.min(n, SEARCH_PAGE_MAX)),
  cursor: z.string().regex(/^[0-9]{1,9}$/, 'a cursor this search answered').optional(),
});

/**
 * One listing as an x402 Bazaar discovery item: the seller's own plain requirements, in the
 * lane's token, in the x402 version the seller speaks (its last well-formed 402; v2 before one
 * was read), so a Bazaar client pays it with the header it accepts (ADR 0080), with payTo,
 * token, maxTimeoutSeconds and `extra` as its 402 spells them once probed (ADR 0091).
 * `lastUpdated`: the seller's last registration, update or takeover.
 */
export function bazaarItem(r: ListingRecord, base: string, token: UsdcToken) {
  const common = {
    resource: r.endpoint,
    type: 'http',
    lastUpdated: new Date(r.updated_at * 1000).toISOString(),
    description: r.description || r.name,
    serviceName: r.name,
    tags: r.tags,
    extensions: {
      marketplace: { resource_id: r.resource_id, quote: `${base}/api/v1/route/quote`, fragment: `${base}/api/v1/resources/${r.resource_id}/fragment`, pricing: r.pricing },
    },
  };
  const v1 = r.x402_version === 1 ? v1Accepts(r, token) : [];
  if (v1.length > 0) return { ...common, x402Version: 1, accepts: v1 };
  return { ...common, x402Version: 2, accepts: r.accepted_assets.map((a) => sellerRequirement(a.asset, a.pay_to, BigInt(a.seller_price_atomic), a.seller_offer ?? undefined, token)) };
}

/**
 * A v1 seller's requirements as the `x402` package's PaymentRequirements (network by name,
 * `maxAmountRequired`, the resource and its description); only the USDC lane on a chain v1
 * names: v1 has no name for `native:1`.
 */
function v1Accepts(r: ListingRecord, token: UsdcToken) {
  const network = v1NetworkName(token);
  if (network === undefined) return [];
  return r.accepted_assets
    .filter((a) => a.asset === 'USDC')
    .map((a) => {
      const own = sellerRequirement('USDC', a.pay_to, BigInt(a.seller_price_atomic), a.seller_offer ?? undefined, token);
      return {
        scheme: 'exact',
        network,
        maxAmountRequired: a.seller_price_atomic,
        resource: r.endpoint,
        description: r.description || r.name,
        mimeType: 'application/json',
        payTo: own.payTo,
        maxTimeoutSeconds: own.maxTimeoutSeconds,
        asset: own.asset,
        extra: own.extra,
      };
    });
}

type Filters = { [K in keyof typeof filters]?: string | undefined };

/**
 * Listings as items, in the order given, kept when they pass the list's filters. `extensions`
 * is one extension key the item must carry (`@x402/extensions`' ListDiscoveryResourcesParams:
 * "Filter by extension key present on the discovered resource").
 */
function items(records: readonly ListingRecord[], q: Filters, base: string, token: UsdcToken) {
  if (q.type && q.type !== 'http') return [];
  return records
    .map((r) => bazaarItem(r, base, token))
    .filter((i) => {
      const accepts: ReadonlyArray<{ network: string; scheme: string; payTo: string }> = i.accepts;
      // A v1 item names its network `base`: a filter by either name finds v1 and v2 items alike;
      // an EVM payTo is found however the seller or the filter spells it (ADR 0091).
      const network = (n: string) => fromV1Network(n) === fromV1Network(q.network);
      return (
        (!q.network || accepts.some((a) => network(a.network))) &&
        (!q.scheme || accepts.some((a) => a.scheme === q.scheme)) &&
        (!q.payTo || accepts.some((a) => samePayee(a.payTo, q.payTo!))) &&
        (!q.extensions || Object.hasOwn(i.extensions, q.extensions))
      );
    });
}

const discovery: FastifyPluginAsync<{ deps: MarketDeps }> = async (app, { deps }) => {
  const list = async (req: FastifyRequest, reply: FastifyReply) => {
    const q = parseQuery(listQuery, req.query);
    const matching = items(deps.index.search({}).map((h) => h.record), q, baseUrl(deps, req), deps.usdc.token);
    sendJson(reply, 200, {
      x402Version: 2,
      items: matching.slice(q.offset, q.offset + q.limit),
      pagination: { limit: q.limit, offset: q.offset, total: matching.length },
    });
  };

  // The capability search's ranking (GET /api/v1/search) over the query's words; the cursor is the offset of the next page.
  const search = async (req: FastifyRequest, reply: FastifyReply) => {
    const q = parseQuery(searchQuery, req.query);
    const ranked = deps.index.search({ capability: q.query }).map((h) => h.record);
    const matching = items(ranked, q, baseUrl(deps, req), deps.usdc.token);
    const from = Number(q.cursor ?? 0);
    const next = from + q.limit < matching.length ? String(from + q.limit) : null;
    sendJson(reply, 200, { x402Version: 2, resources: matching.slice(from, from + q.limit), pagination: { limit: q.limit, cursor: next } });
  };

  for (const prefix of ['', '/facilitator']) {
    app.get(`${prefix}/discovery/resources`, list);
    app.get(`${prefix}/discovery/search`, search);
  }
};

export default discovery;
