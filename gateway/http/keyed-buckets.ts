/**
 * In-process token buckets by any key (an IP, an IP and a link): full at `perMinute`, refilled
 * continuously. Each process enforces its own share; the map forgets its oldest callers first,
 * so a scan of many addresses cannot grow it without end.
 */
import type { Bucket } from '../../runtime/merchant/gate-types.ts';

interface Held {
  tokens: number;
  at: number;
}

const MAX_TRACKED = 100_000;

export class KeyedBuckets {
  private readonly buckets = new Map<string, Held>();
  private readonly rate: number;
  /** In the merchant gate's terms, so both ports answer with the same headers (gateway/http/rate-headers.ts). */
  private readonly limits: Bucket['limits'];

  constructor(
    readonly perMinute: number,
    private readonly clock: () => number = Date.now,
  ) {
    this.rate = perMinute / 60_000;
    this.limits = { capacity: perMinute, perMinute };
  }

  /** One request's outcome; `tokens` is what is left after it (below 1 when refused). */
  take(key: string): Bucket {
    const now = this.clock();
    const b = this.buckets.get(key) ?? { tokens: this.perMinute, at: now };
    b.tokens = Math.min(this.perMinute, b.tokens + (now - b.at) * this.rate);
    b.at = now;
    if (!this.buckets.has(key) && this.buckets.size >= MAX_TRACKED) this.buckets.delete(this.buckets.keys().next().value!);
    // Re-inserted: the map's order is least recently seen first.
    this.buckets.delete(key);
    this.buckets.set(key, b);
    if (b.tokens < 1) return { ok: false, tokens: b.tokens, limits: this.limits };
    b.tokens -= 1;
    return { ok: true, tokens: b.tokens, limits: this.limits };
  }
}
