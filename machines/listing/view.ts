import { DEFAULT_LANE_NETWORKS, MARKET_FEE_BPS, MARKET_LANES, formatAtomic, priceSplit, type LaneNetworks, type MarketAsset } from '../money/market.ts';
import type { ListingContext } from './context.ts';
import type { ListingAssetEntry } from './events.ts';

export type ListingStatus = 'unverified' | 'verified' | 'degraded' | 'offline';

/** marketplace.md "Pricing object", field for field, plus the lane and payee of the asset; `networks` as the marketplace is configured. */
export function pricingOf(a: ListingAssetEntry, networks: LaneNetworks = DEFAULT_LANE_NETWORKS) {
  const asset: MarketAsset = a.asset;
  const s = priceSplit(asset, BigInt(a.seller_price_atomic));
  return {
    model: 'per_call' as const,
    asset,
    network: networks[asset],
    seller_price: formatAtomic(asset, s.seller),
    seller_price_atomic: s.seller.toString(),
    marketplace_fee: formatAtomic(asset, s.fee),
    marketplace_fee_atomic: s.fee.toString(),
    total_price: formatAtomic(asset, s.total),
    total_price_atomic: s.total.toString(),
    fee_bps: MARKET_FEE_BPS,
  };
}

export type Pricing = ReturnType<typeof pricingOf>;

/** An accepted asset: its pricing, the split scheme that pays it, and the seller's payee. */
export function acceptedAsset(a: ListingAssetEntry, networks: LaneNetworks = DEFAULT_LANE_NETWORKS) {
  return { ...pricingOf(a, networks), scheme: MARKET_LANES[a.asset].scheme, pay_to: a.pay_to };
}

/** Label for fewer than five scan observations (DESIGN §5 "Scanner"). */
export const INSUFFICIENT_DATA = 'insufficient_data';

/** marketplace.md "Listing (resource record)": every field, with the types the table gives. */
export function listingRecord(ctx: ListingContext, status: ListingStatus, networks: LaneNetworks = DEFAULT_LANE_NETWORKS) {
  const primary = ctx.assets[0];
  if (!primary) throw new RangeError(`listing ${ctx.resource_id} has no priced asset`);
  return {
    resource_id: ctx.resource_id,
    provider_id: ctx.provider_id,
    name: ctx.name,
    description: ctx.description,
    category: ctx.category,
    tags: ctx.tags,
    endpoint: ctx.endpoint,
    method: ctx.method,
    pricing: pricingOf(primary, networks),
    accepted_assets: ctx.assets.map((a) => acceptedAsset(a, networks)),
    status,
    x402_score: null as number | null,
    score_label: INSUFFICIENT_DATA,
    uptime_30d: null as number | null,
    uptime_observations: 0,
    latency_p50_ms: null as number | null,
    last_scan_at: null as number | null,
    documentation_url: ctx.documentation_url,
    created_at: Math.floor(ctx.created_at / 1000),
    analytics: { transactions: ctx.transactions },
    request_schema: ctx.request_schema,
    response_schema: ctx.response_schema,
    example_request: ctx.example_request,
    example_response: ctx.example_response,
    score_breakdown: null as Record<string, unknown> | null,
    recent_scans: [] as unknown[],
  };
}

export type ListingRecord = ReturnType<typeof listingRecord>;
