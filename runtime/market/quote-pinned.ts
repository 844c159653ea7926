/**
 * A quote pinned to one listing by `resource_id` (ADR 0085): the listing the buyer found, not
 * the capability's best match. It must pass what the chooser asks of any listing it quotes
 * (quote-choice.ts, search-index.ts): callable, accepting the asset, its total under
 * `max_price`, its measured p50 (if any) under `max_latency_ms`.
 */
import { parseCeiling, type MarketAsset } from '../../machines/money/market.ts';
import type { ListingRecord } from '../../machines/listing/view.ts';
import { uncallableReason } from './quote-choice.ts';

export interface PinnedCeilings {
  asset: MarketAsset;
  maxPrice?: string | undefined;
  maxLatencyMs?: number | undefined;
}

/** Why the listing cannot be quoted under the ceilings, as a sentence; undefined: it can. */
export function pinnedRefusal(r: ListingRecord, q: PinnedCeilings): string | undefined {
  const why = uncallableReason(r) ?? ceilingMissed(r, q);
  return why && `Listing ${r.resource_id} is not quoted: ${why}.`;
}

function ceilingMissed(r: ListingRecord, q: PinnedCeilings): string | undefined {
  // The entry the quote's terms are made from (Purchases.termsOf).
  const accepted = r.accepted_assets.find((a) => a.asset === q.asset);
  if (!accepted) return `it does not accept ${q.asset}`;
  if (q.maxPrice !== undefined) {
    const ceiling = parseCeiling(q.asset, q.maxPrice);
    if (ceiling === null || BigInt(accepted.total_price_atomic) > ceiling) return `its total ${accepted.total_price} ${q.asset} is over max_price ${q.maxPrice}`;
  }
  const p50 = r.latency_p50_ms;
  // No latency data passes any ceiling, as in the chooser.
  if (q.maxLatencyMs !== undefined && p50 !== null && p50 > q.maxLatencyMs) return `its p50 latency ${p50} ms is over max_latency_ms ${q.maxLatencyMs}`;
  return undefined;
}
