/**
 * The listing a quote names (DESIGN §5 "Quote") among a capability search's hits, best first:
 * the most relevant one with latency data under the ceiling, else the most relevant one
 * without latency data. Never one the marketplace would not call (ADR 0080): `offline`, or
 * whose newest probe was refused by the SSRF rules, or whose 402 pays someone else (ADR
 * 0071; the index holds those out of the hits already, search-index.ts). The choice is kept with the hits array, which the index shares until
 * a listing changes (search-index.ts), so a capability quoted again costs a lookup instead of
 * a pass over every listing its words match.
 */
import type { ListingRecord } from '../../machines/listing/view.ts';
import { payeeDisowned, type SearchHit } from './search-index.ts';

/** Latency ceilings kept per hits array: agents send a few; the rest are chosen each time. */
const CEILINGS_KEPT = 16;
const chosen = new WeakMap<readonly SearchHit[], Map<number | undefined, SearchHit | null>>();

export function quoteChoice(hits: readonly SearchHit[], maxLatencyMs: number | undefined): SearchHit | undefined {
  let byCeiling = chosen.get(hits);
  const kept = byCeiling?.get(maxLatencyMs);
  if (kept !== undefined) return kept ?? undefined;
  let measured: SearchHit | undefined;
  let unmeasured: SearchHit | undefined;
  for (const h of hits) {
    if (!callable(h.record)) continue;
    const p50 = h.record.latency_p50_ms;
    if (p50 === null) unmeasured ??= h;
    else if (maxLatencyMs === undefined || p50 <= maxLatencyMs) {
      measured = h;
      break;
    }
  }
  const pick = measured ?? unmeasured;
  if (!byCeiling) chosen.set(hits, (byCeiling = new Map<number | undefined, SearchHit | null>()));
  if (byCeiling.size < CEILINGS_KEPT) byCeiling.set(maxLatencyMs, pick ?? null);
  return pick;
}

function callable(r: ListingRecord): boolean {
  return uncallableReason(r) === undefined;
}

/** Why the marketplace would not call the listing, for a refusal to name; undefined: it would. */
export function uncallableReason(r: ListingRecord): string | undefined {
  if (r.status === 'offline') return 'it is offline (its last 3 probes went unanswered)';
  // Refused before any connection: a target the SSRF rules forbid.
  if (r.recent_scans[0]?.outcome === 'refused') return 'its newest probe was refused by the SSRF rules';
  if (payeeDisowned(r)) return "its endpoint's 402 pays another payee than the listing's (pay_to_mismatch)";
  return undefined;
}
