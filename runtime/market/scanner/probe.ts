/**
 * One probe of a listing (DESIGN §5 "Scanner"): an unpaid request to its endpoint that must
 * answer a well-formed x402 402 (v2: the `PAYMENT-REQUIRED` header; v1: the JSON body),
 * parsed with `@x402/core`'s own schemas, whose requirements match the listing for every
 * asset it accepts: scheme, network, asset, payTo and amount. The call goes through the
 * routed execution's `forward` (webhook SSRF rules, timeout, capped body, no redirects).
 */
import { performance } from 'node:perf_hooks';
import { decodePaymentRequiredHeader } from '@x402/core/http';
import { parsePaymentRequired } from '@x402/core/schemas';
import type { ListingAssetEntry, ProbeOutcome } from '../../../machines/listing/events.ts';
import { samePayee } from '../../../machines/listing/rules.ts';
import { MARKET_LANES, USDC_TOKEN } from '../../../machines/money/market.ts';
import { sellerOffer, type LaneOffer } from '../../../machines/money/seller-offer.ts';
import { forward, targetProblem, type ForwardOptions } from '../forward.ts';
import type { UsdcToken } from '../lanes/usdc-ledger.ts';
import { assetId, laneNetwork, v1NetworkName } from '../requirements.ts';

/** A seller's 402 is a few KiB; more is not an x402 answer. */
export const PROBE_MAX_BODY_BYTES = 64 * 1024;
export const PROBE_TIMEOUT_MS = 10_000;

export interface ProbeTarget {
  endpoint: string;
  method: string;
  assets: ListingAssetEntry[];
}

export interface ProbeResult {
  outcome: ProbeOutcome;
  http_status: number | null;
  latency_ms: number | null;
  detail: string;
  /** The x402 version of the 402 read, when the endpoint answered a well-formed one (ADR 0080). */
  x402_version?: 1 | 2;
  /** Per listed lane, the seller's offer that matched it, as the seller spells it (ADR 0091); absent when none did. */
  seller_offers?: LaneOffer[];
}

const NO_BODY = new Set(['GET', 'HEAD']);

interface Offer {
  scheme: string;
  network: string;
  asset: string;
  payTo: string;
  amount: string;
  maxTimeoutSeconds: number;
  extra: Record<string, unknown> | undefined;
}

/** A probe's result and, when the endpoint answered a well-formed 402, the payees it named on each listed lane. */
export interface LanesProbed {
  result: ProbeResult;
  payees: LanePayees[] | null;
}

export interface LanePayees {
  asset: ListingAssetEntry['asset'];
  pay_to: string[];
}

/**
 * `usdc`: the USDC lane's token as configured (USDC_TOKEN_*, USDC_NETWORK; USDC on Base when
 * unset): a seller's USDC offer must name its contract and its chain (v1: the chain's name).
 */
export async function probe(t: ProbeTarget, opts: ForwardOptions, usdc: UsdcToken = USDC_TOKEN): Promise<ProbeResult> {
  return (await probeLanes(t, opts, usdc)).result;
}

/** The probe, keeping who the 402 pays on each lane: a takeover's proof of control (ADR 0072). */
export async function probeLanes(t: ProbeTarget, opts: ForwardOptions, usdc: UsdcToken = USDC_TOKEN): Promise<LanesProbed> {
  // A name without an address is `unreachable`, as a connection that fails; `refused` is for the SSRF rules.
  const problem = await targetProblem(t.endpoint, opts);
  if (problem) {
    const outcome: ProbeOutcome = problem.kind === 'unresolvable' ? 'unreachable' : 'refused';
    return { result: { outcome, http_status: null, latency_ms: null, detail: problem.reason.slice(0, 300) }, payees: null };
  }
  const method = t.method.toUpperCase();
  const t0 = performance.now();
  const res = await forward(
    {
      url: t.endpoint,
      method,
      headers: { accept: 'application/json', ...(NO_BODY.has(method) ? {} : { 'content-type': 'application/json' }) },
      body: NO_BODY.has(method) ? null : Buffer.from('{}'),
      answerHeaders: ['payment-required'],
    },
    { ...opts, timeoutMs: opts.timeoutMs ?? PROBE_TIMEOUT_MS, maxBodyBytes: opts.maxBodyBytes ?? PROBE_MAX_BODY_BYTES },
  );
  const latency = Math.round(performance.now() - t0);
  if (!res.ok && res.status === undefined) {
    const outcome: ProbeOutcome = res.reason.startsWith('no answer within') ? 'timeout' : !res.sent ? 'refused' : 'unreachable';
    return { result: { outcome, http_status: null, latency_ms: null, detail: res.reason.slice(0, 300) }, payees: null };
  }
  // Both answers left said a status: a whole one, or one cut at the cap.
  const status = res.status as number;
  const answered = (outcome: ProbeOutcome, detail: string, payees: LanePayees[] | null = null, version?: 1 | 2, offers: LaneOffer[] = []): LanesProbed => ({
    result: { outcome, http_status: status, latency_ms: latency, detail: detail.slice(0, 300), ...(version !== undefined && { x402_version: version }), ...(offers.length > 0 && { seller_offers: offers }) },
    payees,
  });
  // An answer cut at the size cap is judged by its status like any other: only a 402 needs its body.
  if (status >= 500) return answered('server_error', `the endpoint answered ${status}`);
  if (status >= 200 && status < 300) return answered('no_payment_required', `the endpoint answered ${status} to an unpaid request`);
  if (status !== 402) return answered('http_error', `the endpoint answered ${status}, not 402`);
  if (!res.ok) return answered('malformed', res.reason);
  const read = offersOf(res.headers['payment-required'], res.body);
  if (typeof read === 'string') return answered('malformed', read);
  const { offers, version } = read;
  const payees = t.assets.map((a) => ({ asset: a.asset, pay_to: [...new Set(offers.filter((o) => sameLane(o, a, usdc)).map((o) => o.payTo))] }));
  const missing = t.assets.filter((a) => !offers.some((o) => matches(o, a, usdc))).map((a) => a.asset);
  const matched = t.assets.flatMap((a) => laneOfferOf(a, offers.find((o) => matches(o, a, usdc))));
  // The endpoint's own 402 pays someone else on a lane the listing sells: whoever listed it may not control it (ADR 0071).
  for (const a of t.assets.filter((x) => missing.includes(x.asset))) {
    const lane = payees.find((p) => p.asset === a.asset)?.pay_to ?? [];
    const payee = lane.some((p) => samePayee(p, a.pay_to)) ? undefined : lane[0];
    if (payee !== undefined) return answered('pay_to_mismatch', `the endpoint's 402 pays ${a.asset} to ${payee}, not to the listing's payTo ${a.pay_to}`, payees, version, matched);
  }
  if (missing.length > 0) return answered('mismatch', `no payment requirement matches the listing's ${missing.join(' and ')} price, asset and payTo`, payees, version, matched);
  return answered('ok', '', payees, version, matched);
}

/** The matching offer's terms as the seller spells them; none when they cannot be kept (an `extra` of more than a few KiB). */
function laneOfferOf(a: ListingAssetEntry, o: Offer | undefined): LaneOffer[] {
  if (!o) return [];
  const offer = sellerOffer.safeParse({ pay_to: o.payTo, asset_id: o.asset, max_timeout_seconds: o.maxTimeoutSeconds, ...(o.extra !== undefined && { extra: o.extra }) });
  return offer.success ? [{ asset: a.asset, ...offer.data }] : [];
}

/** The 402's x402 version and offers, or why it is not a well-formed x402 answer. */
function offersOf(header: string | undefined, body: Buffer): { version: 1 | 2; offers: Offer[] } | string {
  let doc: unknown;
  if (header) {
    try {
      doc = decodePaymentRequiredHeader(header);
    } catch {
      return 'the PAYMENT-REQUIRED header is not base64 JSON';
    }
  } else {
    try {
      doc = JSON.parse(body.toString('utf8'));
    } catch {
      return 'a 402 without a PAYMENT-REQUIRED header and without a JSON body';
    }
  }
  const parsed = parsePaymentRequired(doc);
  if (!parsed.success) return `not an x402 PaymentRequired: ${parsed.error.issues[0]?.path.join('.') ?? ''} ${parsed.error.issues[0]?.message ?? ''}`.trim();
  const offers = parsed.data.accepts.map((a) => ({
    scheme: a.scheme,
    network: a.network,
    asset: a.asset,
    payTo: a.payTo,
    amount: 'amount' in a ? a.amount : a.maxAmountRequired,
    maxTimeoutSeconds: a.maxTimeoutSeconds,
    extra: isRecord(a.extra) ? a.extra : undefined,
  }));
  return { version: parsed.data.x402Version === 1 ? 1 : 2, offers };
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The offer is on the listing asset's lane as this marketplace runs it: its scheme, network (v1: by name) and token. */
function sameLane(o: Offer, a: ListingAssetEntry, usdc: UsdcToken): boolean {
  const network = laneNetwork(a.asset, usdc);
  const v1Name = a.asset === 'USDC' ? v1NetworkName(usdc) : undefined;
  return o.scheme === MARKET_LANES[a.asset].legScheme && (o.network === network || (v1Name !== undefined && o.network === v1Name)) && samePayee(o.asset, assetId(a.asset, usdc));
}

function matches(o: Offer, a: ListingAssetEntry, usdc: UsdcToken): boolean {
  return sameLane(o, a, usdc) && samePayee(o.payTo, a.pay_to) && o.amount === a.seller_price_atomic;
}
