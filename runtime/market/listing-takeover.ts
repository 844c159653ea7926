/**
 * Taking a listing over (ADR 0072): a registration of a listed endpoint by another key is
 * accepted when the endpoint, asked now without payment, answers a 402 naming the new
 * registration's `payTo` on every lane it lists. The probe is the scanner's (same SSRF rules,
 * timeout and size cap, same scheme, network and token matching); what it saw travels in the
 * listing actor's `listing.take_over` event, whose machine decides on that proof alone.
 */
import type { ListingAssetEntry, TakeoverProof } from '../../machines/listing/events.ts';
import { samePayee, unnamedPayees } from '../../machines/listing/rules.ts';
import type { ForwardOptions } from './forward.ts';
import type { UsdcToken } from './lanes/usdc-ledger.ts';
import { probeLanes, type LanesProbed, type ProbeTarget } from './scanner/probe.ts';

/** How the registration reaches an endpoint: as the scanner and routed execution do. */
export interface ControlProbe {
  forward: ForwardOptions;
  /** The USDC lane's token (contract and chain) a 402 must name (USDC on Base when absent). */
  usdcToken?: UsdcToken | undefined;
}

/** What the event schema carries of one lane: a 402 may offer many payees, the proof needs few. */
const PAYEES_KEPT = 20;
const PAYEE_CHARS = 200;

/** Probes the endpoint against the new registration's terms; never throws (a failure is in the outcome). */
export async function proveControl(t: ProbeTarget, opts: ControlProbe, clock: () => number): Promise<TakeoverProof> {
  const probedAt = clock();
  const failed = (e: unknown): LanesProbed => ({ result: { outcome: 'unreachable', http_status: null, latency_ms: null, detail: String(e).slice(0, 300) }, payees: null });
  const { result, payees } = await probeLanes(t, opts.forward, opts.usdcToken).catch(failed);
  return {
    probed_at: probedAt,
    ...result,
    payees: (payees ?? []).map((lane) => {
      const own = t.assets.find((a) => a.asset === lane.asset)?.pay_to ?? '';
      // The registration's own payee first, so the cap never drops the one that proves control.
      const sorted = [...lane.pay_to].sort((x, y) => Number(samePayee(y, own)) - Number(samePayee(x, own)));
      return { asset: lane.asset, pay_to: sorted.filter((p) => p.length <= PAYEE_CHARS).slice(0, PAYEES_KEPT) };
    }),
  };
}

/** Why the proof does not show control, as the 403 says it; null when it does. */
export function notProven(assets: readonly ListingAssetEntry[], proof: TakeoverProof): string | null {
  const unnamed = unnamedPayees(assets, proof);
  if (unnamed.length === 0) return null;
  const seen = (a: ListingAssetEntry) => proof.payees.find((p) => p.asset === a.asset)?.pay_to ?? [];
  const why =
    proof.payees.length === 0
      ? `it answered ${proof.outcome}${proof.detail ? ` (${proof.detail})` : ''}`
      : unnamed.map((a) => (seen(a).length > 0 ? `it pays ${a.asset} to ${seen(a).join(', ')}` : `it offers no ${a.asset} payment`)).join('; ');
  return `This listing is controlled by another key. To take it over, the endpoint's own 402 must name your payTo on every asset you list; ${why}.`;
}
