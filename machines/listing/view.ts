import { DEFAULT_LANE_NETWORKS, MARKET_FEE_BPS, MARKET_LANES, formatAtomic, priceSplit, type LaneNetworks, type MarketAsset } from '../money/market.ts';
import type { LaneOffer, SellerOffer } from '../money/seller-offer.ts';
import { scanOf, type ListingContext } from './context.ts';
import type { ListingAssetEntry } from './events.ts';
import { samePayee } from './rules.ts';
import { scoreOf, type ScanEntry } from './score.ts';

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

/**
 * An accepted asset: its pricing, the split scheme that pays it, the seller's payee, and the
 * seller's own offer on its lane as the scanner last read it (ADR 0091; null before one was).
 */
export function acceptedAsset(a: ListingAssetEntry, networks: LaneNetworks = DEFAULT_LANE_NETWORKS, offers: readonly LaneOffer[] = []) {
  return { ...pricingOf(a, networks), scheme: MARKET_LANES[a.asset].scheme, pay_to: a.pay_to, seller_offer: offerFor(a, offers) };
}

/**
 * The offer read on `a`'s lane, if it paid the listing's current payee: one read before an
 * update or takeover that changed it says nothing about the new one.
 */
function offerFor(a: ListingAssetEntry, offers: readonly LaneOffer[]): SellerOffer | null {
  const o = offers.find((x) => x.asset === a.asset && samePayee(x.pay_to, a.pay_to));
  if (!o) return null;
  const { asset: _lane, ...offer } = o;
  return offer;
}

/** One `recent_scans` entry: time in Unix seconds like `created_at`, the HTTP status, latency and outcome. */
export function scanView(p: ScanEntry) {
  return { at: Math.floor(p.at / 1000), status: p.http_status, latency_ms: p.latency_ms, outcome: p.outcome, detail: p.detail };
}

/** marketplace.md "Listing (resource record)": every field, with the types the table gives. */
export function listingRecord(ctx: ListingContext, status: ListingStatus, networks: LaneNetworks = DEFAULT_LANE_NETWORKS) {
  const primary = ctx.assets[0];
  if (!primary) throw new RangeError(`listing ${ctx.resource_id} has no priced asset`);
  const scan = scanOf(ctx);
  const score = scoreOf(scan);
  const newest = scan.recent[0];
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
    accepted_assets: ctx.assets.map((a) => acceptedAsset(a, networks, scan.offers)),
    status,
    x402_score: score.x402_score,
    score_label: score.score_label as string,
    uptime_30d: score.uptime_30d,
    uptime_observations: score.uptime_observations,
    latency_p50_ms: score.latency_p50_ms,
    last_scan_at: newest ? Math.floor(newest.at / 1000) : null,
    documentation_url: ctx.documentation_url,
    created_at: Math.floor(ctx.created_at / 1000),
    /** Unix seconds of the seller's last registration, update or takeover (the Bazaar's `lastUpdated`). */
    updated_at: Math.floor(ctx.updated_at / 1000),
    /** The seller's x402 version as its last well-formed 402 showed it; null before one was read (ADR 0080). */
    x402_version: scan.x402_version ?? null,
    analytics: { transactions: ctx.transactions },
    request_schema: ctx.request_schema,
    response_schema: ctx.response_schema,
    example_request: ctx.example_request,
    example_response: ctx.example_response,
    score_breakdown: score.score_breakdown as Record<string, number> | null,
    recent_scans: scan.recent.map(scanView),
  };
}

export type ListingRecord = ReturnType<typeof listingRecord>;
