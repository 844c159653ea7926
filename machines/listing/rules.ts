import { scanOf, type ListingContext } from './context.ts';
import { recordProbe, statusOf, type ScanEntry, type ScannedStatus } from './score.ts';
import type { ListingEvent } from './events.ts';

/** Guards of the listing machine as pure functions. */

/** Only the key that registered the listing may change it (DESIGN §5: same key updates). */
export function sameProvider(ctx: ListingContext, e: ListingEvent): boolean {
  return e.type === 'listing.update' && e.provider_id === ctx.provider_id && e.resource_id === ctx.resource_id;
}

/** A settlement is counted once per intent, however often it is delivered. */
export function newSettlement(ctx: ListingContext, e: ListingEvent): boolean {
  return e.type === 'listing.purchase_settled' && !ctx.counted.includes(e.intent_id);
}

/** The status a probe result leads to, from the scan state it leaves (score.ts `statusOf`). */
export function statusAfterProbe(ctx: ListingContext, e: ListingEvent): ScannedStatus | null {
  if (e.type !== 'listing.probed') return null;
  return statusOf(recordProbe(scanOf(ctx), probeEntry(e), e.next_probe_in_ms));
}

export function probeEntry(e: Extract<ListingEvent, { type: 'listing.probed' }>): ScanEntry {
  return { at: e.at, outcome: e.outcome, http_status: e.http_status, latency_ms: e.latency_ms, detail: e.detail };
}
