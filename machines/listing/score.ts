/**
 * The scanner's record of a listing and its x402_score (DESIGN §5 "Scanner"): what each
 * probe and routed execution adds, and the score, label and status derived from it. Pure:
 * time arrives in the events, so the 30-day window is counted in the probes' own days.
 */
import type { LaneOffer } from '../money/seller-offer.ts';
import type { ProbeOutcome } from './events.ts';

/** One probe as the listing record shows it in `recent_scans`. */
export interface ScanEntry {
  /** Unix milliseconds the probe was made. */
  at: number;
  outcome: ProbeOutcome;
  http_status: number | null;
  latency_ms: number | null;
  detail: string;
}

/** Probes of one UTC day: a bounded stand-in for 30 days of probes (4,320 at the default interval). */
export interface DayCount {
  day: number;
  probes: number;
  up: number;
  conformant: number;
}

export interface ScanState {
  /** Newest first, at most RECENT_SCANS. */
  recent: ScanEntry[];
  /** Oldest first, the last WINDOW_DAYS days that saw a probe. */
  days: DayCount[];
  /** A conformant 402 seen since the listing was registered or last changed. */
  verified: boolean;
  /** Outcomes of the last counted routed executions (`paidCallCounts`), newest last: 1 = served. */
  paid: number[];
  /** The wait before the next probe the scanner asked for, so a lost probe still leaves a round scheduled. */
  interval_ms: number;
  /**
   * The x402 version of the newest well-formed 402 the endpoint answered: the header a payment
   * to this seller goes in (ADR 0080). Absent until one was read (and in older snapshots).
   */
  x402_version?: 1 | 2;
  /**
   * Per lane, the seller's own offer its newest matching 402 made (ADR 0091): payTo, token,
   * maxTimeoutSeconds and `extra` as the seller spells them. Absent until one was read (and in
   * older snapshots).
   */
  offers?: LaneOffer[];
}

export const RECENT_SCANS = 20;
export const WINDOW_DAYS = 30;
export const PAID_WINDOW = 50;
export const DEFAULT_PROBE_INTERVAL_MS = 10 * 60_000;
/** DESIGN §5: `insufficient_data` under five observations. */
export const MIN_OBSERVATIONS = 5;
/** Consecutive unanswered probes after which a listing is `offline`. */
export const OFFLINE_AFTER = 3;
/** Newest probes that must all conform for `verified`; any failure among them is `degraded`. */
export const VERIFIED_RUN = 5;
/** p50 at or under GOOD earns the whole latency part, at or over BAD none, linear between. */
export const LATENCY_GOOD_MS = 200;
export const LATENCY_BAD_MS = 2_000;
export const WEIGHTS = { availability: 50, latency: 20, conformance: 20, paid_call_success: 10 } as const;

const DAY_MS = 86_400_000;

export function emptyScan(intervalMs = DEFAULT_PROBE_INTERVAL_MS): ScanState {
  return { recent: [], days: [], verified: false, paid: [], interval_ms: intervalMs };
}

/** The endpoint answered at all: a timeout, a refused or failed connection or a 5xx is down. */
export function isUp(o: ProbeOutcome): boolean {
  return o !== 'timeout' && o !== 'unreachable' && o !== 'server_error' && o !== 'refused';
}

/**
 * The scan state after one probe; `version`: the x402 version of the 402 it read, if it read
 * one; `offers`: the seller's offers that matched the listing's lanes, each replacing the one
 * kept for its lane (a lane not matched this time keeps its last).
 */
export function recordProbe(s: ScanState, p: ScanEntry, intervalMs: number, version?: 1 | 2, offers?: readonly LaneOffer[]): ScanState {
  const day = Math.floor(p.at / DAY_MS);
  const up = isUp(p.outcome) ? 1 : 0;
  const ok = p.outcome === 'ok' ? 1 : 0;
  const last = s.days.at(-1);
  const days = last?.day === day
    ? [...s.days.slice(0, -1), { day, probes: last.probes + 1, up: last.up + up, conformant: last.conformant + ok }]
    : [...s.days, { day, probes: 1, up, conformant: ok }];
  return {
    recent: [p, ...s.recent].slice(0, RECENT_SCANS),
    // A probe older than the newest day (clock skew between processes) still lands in a bucket of its own and ages out.
    days: days.filter((d) => d.day > day - WINDOW_DAYS),
    verified: s.verified || ok === 1,
    paid: s.paid,
    interval_ms: intervalMs,
    ...((version ?? s.x402_version) !== undefined && { x402_version: version ?? s.x402_version }),
    ...keptOffers(s.offers, offers),
  };
}

function keptOffers(kept: readonly LaneOffer[] | undefined, read: readonly LaneOffer[] | undefined): { offers?: LaneOffer[] } {
  if (!read?.length) return kept ? { offers: [...kept] } : {};
  return { offers: [...read, ...(kept ?? []).filter((k) => !read.some((r) => r.asset === k.asset))] };
}

/**
 * How a routed execution's end counts toward paid-call success (ADR 0088): `true` served (an
 * answer below 400), `false` failed by the seller (a 5xx, or no usable answer: a timeout, an
 * unreachable or refused endpoint, an oversize answer; `sellerStatus` null), `null` not counted.
 * A 4xx is the seller declining the call (402: the buyer's payment, others: the request) with
 * no fee taken, so a buyer could send any number of them for nothing: it counts neither way.
 */
export function paidCallCounts(sellerStatus: number | null): boolean | null {
  if (sellerStatus === null || sellerStatus >= 500) return false;
  return sellerStatus < 400 ? true : null;
}

export function recordExecution(s: ScanState, ok: boolean): ScanState {
  return { ...s, paid: [...s.paid, ok ? 1 : 0].slice(-PAID_WINDOW) };
}

export type ScannedStatus = 'unverified' | 'verified' | 'degraded' | 'offline';

/**
 * Status after a probe: `offline` once the last OFFLINE_AFTER probes went unanswered;
 * `unverified` until a conformant 402 since the last change; then `verified` while the newest
 * VERIFIED_RUN probes all conform, else `degraded`.
 */
export function statusOf(s: ScanState): ScannedStatus {
  const lastDown = s.recent.slice(0, OFFLINE_AFTER);
  if (lastDown.length === OFFLINE_AFTER && lastDown.every((p) => !isUp(p.outcome))) return 'offline';
  if (!s.verified) return 'unverified';
  return s.recent.slice(0, VERIFIED_RUN).every((p) => p.outcome === 'ok') ? 'verified' : 'degraded';
}

/** Nearest-rank median of the answered probes' latencies among the recent scans. */
export function latencyP50(s: ScanState): number | null {
  const l = s.recent.filter((p) => isUp(p.outcome) && p.latency_ms !== null).map((p) => p.latency_ms as number).sort((a, b) => a - b);
  if (l.length === 0) return null;
  return l[Math.ceil(l.length / 2) - 1] ?? null;
}

export interface ScoreBreakdown {
  availability: number;
  latency: number;
  conformance: number;
  paid_call_success: number;
}

export interface Score {
  uptime_30d: number | null;
  uptime_observations: number;
  latency_p50_ms: number | null;
  x402_score: number | null;
  score_breakdown: ScoreBreakdown | null;
  score_label: 'excellent' | 'good' | 'fair' | 'poor' | 'insufficient_data';
}

const round1 = (x: number): number => Math.round(x * 10) / 10;

/**
 * x402_score 0-100 (DESIGN §5): availability 50 × uptime, latency 20 on the p50, conformance
 * 20 × the share of answered probes that were a matching 402, paid-call success 10 × the
 * share of routed executions the seller served (the conformance share while there are none,
 * so a listing nobody has bought yet is not marked down for it).
 */
export function scoreOf(s: ScanState): Score {
  const probes = s.days.reduce((n, d) => n + d.probes, 0);
  const up = s.days.reduce((n, d) => n + d.up, 0);
  const conformant = s.days.reduce((n, d) => n + d.conformant, 0);
  const p50 = latencyP50(s);
  const uptime = probes > 0 ? up / probes : null;
  const base = { uptime_30d: uptime === null ? null : Math.round(uptime * 1000) / 1000, uptime_observations: probes, latency_p50_ms: p50 };
  if (probes < MIN_OBSERVATIONS) return { ...base, x402_score: null, score_breakdown: null, score_label: 'insufficient_data' };
  const conformShare = up > 0 ? conformant / up : 0;
  const paidShare = s.paid.length > 0 ? s.paid.reduce((a, b) => a + b, 0) / s.paid.length : conformShare;
  const latencyShare = p50 === null ? 0 : Math.min(1, Math.max(0, (LATENCY_BAD_MS - p50) / (LATENCY_BAD_MS - LATENCY_GOOD_MS)));
  const parts = {
    availability: WEIGHTS.availability * (up / probes),
    latency: WEIGHTS.latency * latencyShare,
    conformance: WEIGHTS.conformance * conformShare,
    paid_call_success: WEIGHTS.paid_call_success * paidShare,
  };
  const score = Math.round(parts.availability + parts.latency + parts.conformance + parts.paid_call_success);
  return {
    ...base,
    x402_score: score,
    score_breakdown: { availability: round1(parts.availability), latency: round1(parts.latency), conformance: round1(parts.conformance), paid_call_success: round1(parts.paid_call_success) },
    score_label: labelOf(score),
  };
}

export function labelOf(score: number): Score['score_label'] {
  if (score >= 90) return 'excellent';
  if (score >= 75) return 'good';
  if (score >= 50) return 'fair';
  return 'poor';
}
