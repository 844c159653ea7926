/**
 * Retry schedule of DESIGN.md §4: after the first attempt fails, wait 5 s, 5 min, 30 min,
 * 2 h, 5 h, 10 h, 14 h, 20 h, 24 h (≈ 3 days in all); when the tenth attempt fails the
 * delivery is `failed`.
 */
export const RETRY_DELAYS_MS: readonly number[] = [
  5_000,
  5 * 60_000,
  30 * 60_000,
  2 * 3600_000,
  5 * 3600_000,
  10 * 3600_000,
  14 * 3600_000,
  20 * 3600_000,
  24 * 3600_000,
];

export const MAX_ATTEMPTS = RETRY_DELAYS_MS.length + 1;

export interface ScheduleOptions {
  /** Multiplies every delay; tests use a small scale so three days pass in seconds. */
  scale?: number;
  /** Relative jitter: the delay is drawn uniformly from d × [1 − j, 1 + j]. Default 0.2. */
  jitter?: number;
  random?: () => number;
}

/**
 * Delay before the next try after attempt `attempt` (1-based) failed, or null when the
 * schedule is spent. Jitter spreads retries so that an endpoint coming back is not hit by
 * every backlogged delivery in the same second.
 */
export function retryDelayMs(attempt: number, opts: ScheduleOptions = {}): number | null {
  const base = RETRY_DELAYS_MS[attempt - 1];
  if (base === undefined || attempt < 1) return null;
  const j = opts.jitter ?? 0.2;
  const r = (opts.random ?? Math.random)();
  return Math.max(0, Math.round(base * (opts.scale ?? 1) * (1 - j + 2 * j * r)));
}
