/**
 * In-process token buckets by any key (an IP, an IP and a link): full at `perMinute`, refilled
 * continuously. Each process enforces its own share; the map forgets its oldest callers first,
 * so a scan of many addresses cannot grow it without end.
 */
interface Bucket {
  tokens: number;
  at: number;
}

const MAX_TRACKED = 100_000;

export interface Take {
  ok: boolean;
  /** Tokens left after this request, floored. */
  remaining: number;
  /** Seconds until one token is back (when refused). */
  retryAfter: number;
}

export class KeyedBuckets {
  private readonly buckets = new Map<string, Bucket>();
  private readonly rate: number;

  constructor(
    readonly perMinute: number,
    private readonly clock: () => number = Date.now,
  ) {
    this.rate = perMinute / 60_000;
  }

  take(key: string): Take {
    const now = this.clock();
    const b = this.buckets.get(key) ?? { tokens: this.perMinute, at: now };
    b.tokens = Math.min(this.perMinute, b.tokens + (now - b.at) * this.rate);
    b.at = now;
    if (!this.buckets.has(key) && this.buckets.size >= MAX_TRACKED) this.buckets.delete(this.buckets.keys().next().value!);
    // Re-inserted: the map's order is least recently seen first.
    this.buckets.delete(key);
    this.buckets.set(key, b);
    if (b.tokens < 1) return { ok: false, remaining: 0, retryAfter: Math.max(1, Math.ceil((1 - b.tokens) / this.rate / 1000)) };
    b.tokens -= 1;
    return { ok: true, remaining: Math.floor(b.tokens), retryAfter: 0 };
  }
}
