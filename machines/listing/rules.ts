import { ownerGeneration, ownerSince, scanOf, termsDigest, type ListingContext } from './context.ts';
import { recordProbe, statusOf, type ScanEntry, type ScanState, type ScannedStatus } from './score.ts';
import type { ListingAssetEntry, ListingEvent, ListingTakeOverEvent, TakeoverProof } from './events.ts';

/** Guards of the listing machine as pure functions. */

/** Only the key that registered the listing may change it (DESIGN §5: same key updates). */
export function sameProvider(ctx: ListingContext, e: ListingEvent): boolean {
  return e.type === 'listing.update' && e.provider_id === ctx.provider_id && e.resource_id === ctx.resource_id;
}

/** A settlement is counted once per intent, however often it is delivered. */
export function newSettlement(ctx: ListingContext, e: ListingEvent): boolean {
  return e.type === 'listing.purchase_settled' && !ctx.counted.includes(e.intent_id);
}

/**
 * Whether a probe was made against the listing's current ownership and terms. Ownership: its
 * generation when it names one (ADR 0077), else its owner's id (ADR 0072), else (older probes)
 * always. Terms: the digest it names (ADR 0088), else (older probes) the current ones.
 */
export function currentProbe(ctx: ListingContext, e: Extract<ListingEvent, { type: 'listing.probed' }>): boolean {
  if (e.terms_digest !== undefined && e.terms_digest !== termsDigest(ctx)) return false;
  if (e.owner_generation !== undefined) return e.owner_generation === ownerGeneration(ctx) && (e.provider_id ?? ctx.provider_id) === ctx.provider_id;
  return e.provider_id === undefined || e.provider_id === ctx.provider_id;
}

/**
 * The status a probe result leads to, from the scan state it leaves (score.ts `statusOf`);
 * null when it is not this ownership's or these terms': a probe judged against the terms of an
 * earlier ownership or an earlier update is not recorded (ADR 0072, 0077, 0088).
 */
export function statusAfterProbe(ctx: ListingContext, e: ListingEvent): ScannedStatus | null {
  if (e.type !== 'listing.probed' || !currentProbe(ctx, e)) return null;
  return statusOf(recordProbe(scanOf(ctx), probeEntry(e), e.next_probe_in_ms, e.x402_version));
}

export function probeEntry(e: Extract<ListingEvent, { type: 'listing.probed' }>): ScanEntry {
  return { at: e.at, outcome: e.outcome, http_status: e.http_status, latency_ms: e.latency_ms, detail: e.detail };
}

/** EVM addresses compare without case; any other payee exactly. */
export function samePayee(x: string, y: string): boolean {
  return x.startsWith('0x') ? x.toLowerCase() === y.toLowerCase() : x === y;
}

/** The assets whose `pay_to` the endpoint's 402 did not name on that asset's lane; empty: control is proven. */
export function unnamedPayees(assets: readonly ListingAssetEntry[], proof: TakeoverProof): ListingAssetEntry[] {
  return assets.filter((a) => !proof.payees.some((p) => p.asset === a.asset && p.pay_to.some((x) => samePayee(x, a.pay_to))));
}

/**
 * A takeover is accepted when it comes from another key, names the ownership the listing
 * still has (a stale proof is refused), and its proof shows the endpoint's 402 naming the new
 * `pay_to` on every lane the new registration lists (ADR 0072).
 */
export function provenTakeover(ctx: ListingContext, e: ListingEvent): boolean {
  return (
    e.type === 'listing.take_over' &&
    e.resource_id === ctx.resource_id &&
    e.provider_id !== ctx.provider_id &&
    e.previous_provider_id === ctx.provider_id &&
    (e.previous_owner_generation !== undefined ? e.previous_owner_generation === ownerGeneration(ctx) : e.previous_owner_since === ownerSince(ctx)) &&
    unnamedPayees(e.assets, e.proof).length === 0
  );
}

/**
 * The scan state after a takeover: the endpoint's availability history stays, the new terms
 * must be seen conforming again, and the takeover's own probe is the newest one.
 */
export function scanAfterTakeover(ctx: ListingContext, e: ListingTakeOverEvent): ScanState {
  const scan = scanOf(ctx);
  const p = e.proof;
  const entry: ScanEntry = { at: p.probed_at, outcome: p.outcome, http_status: p.http_status, latency_ms: p.latency_ms, detail: p.detail };
  return recordProbe({ ...scan, verified: false }, entry, scan.interval_ms, p.x402_version);
}

/** The status a proven takeover leads to; null for one that is not. */
export function statusAfterTakeover(ctx: ListingContext, e: ListingEvent): ScannedStatus | null {
  if (e.type !== 'listing.take_over' || !provenTakeover(ctx, e)) return null;
  return statusOf(scanAfterTakeover(ctx, e));
}
