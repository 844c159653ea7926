/**
 * Token leases (ADR 0004): this process's share of the shared token buckets. Each bucket
 * (`ip:<address>`, `key:<api key id>`) lives in PostgreSQL (`rate_buckets`, `anm_lease`,
 * migration 0005); a process takes tokens from it in chunks and serves requests from the chunk
 * without a round trip. The store counts what a holder has leased, and refills a bucket only up
 * to what no live lease holds, so the tokens granted by all processes together never exceed an
 * exact bucket's (capacity + rate x time over any window).
 *
 * This class is the process side and does no I/O: it answers from the local lease, or says
 * what to ask the store (`LeaseRequest`) and applies the store's answer (`LeaseReply`).
 * Lease requests carry deltas (settle, unused, want), so several may be in flight at once.
 */
import { randomBytes } from 'node:crypto';

export interface BucketLimits {
  /** Burst: tokens a full bucket holds. */
  capacity: number;
  perMinute: number;
}

/** One request's outcome on one bucket; `tokens` is what the client may still spend (headers). */
export interface BucketView {
  ok: boolean;
  tokens: number;
  /** Set when the token came from a local lease: the holder name it belongs to (see `refund`). */
  holder?: string;
}

export interface LeaseRequest {
  /** Null while the bucket is not known yet (a key seen for the first time). */
  bucket: string | null;
  limits: BucketLimits;
  /** Tokens asked for; 0 only settles. */
  want: number;
  /** How much of this holder's lease the store may forget (spent or returned). */
  settle: number;
  /** Unspent tokens given back. */
  unused: number;
  holder: string;
  sentAt: number;
  done: () => void;
}

export interface LeaseReply {
  granted: number;
  /** The shared bucket's tokens after the operation. */
  tokens: number;
  /** What other holders' live leases hold. */
  others: number;
}

export interface LeaseOptions {
  /** Lease lifetime in the store; a crashed process's share returns after it. */
  ttlMs?: number;
  /** How long this process uses a lease, counted from before the request was sent (< ttlMs). */
  useMs?: number;
  /** A bucket untouched this long has its lease settled by the sweep. */
  idleMs?: number;
  /** Largest chunk, as a fraction of capacity (at least 1 token). */
  fraction?: number;
  now?: () => number;
  holder?: string;
}

interface State {
  limits: BucketLimits;
  /** Tokens this process may still hand out (until `validUntil`). */
  left: number;
  /** What the store counts as leased to this holder, as far as this process knows. */
  outstanding: number;
  validUntil: number;
  lastGrant: number;
  lastGrantAt: number;
  lastTake: number;
  /** The shared bucket at the last reply. */
  shared: number;
  others: number;
  syncAt: number;
  /** A refusal is remembered until one token could have refilled (at most a second). */
  refusedUntil: number;
  pending: Promise<void> | null;
}

const perMs = (l: BucketLimits) => l.perMinute / 60_000;

export class LeaseBook {
  readonly ttlMs: number;
  private readonly useMs: number;
  private readonly idleMs: number;
  private readonly fraction: number;
  private readonly now: () => number;
  private readonly base: string;
  private gen = 0;
  private readonly states = new Map<string, State>();

  constructor(opts: LeaseOptions = {}) {
    this.ttlMs = opts.ttlMs ?? 10_000;
    this.useMs = opts.useMs ?? this.ttlMs / 2;
    this.idleMs = opts.idleMs ?? 1_000;
    this.fraction = opts.fraction ?? 0.1;
    this.now = opts.now ?? Date.now;
    this.base = opts.holder ?? randomBytes(8).toString('hex');
  }

  /** This process's name in the store; a new one after a failure whose outcome is unknown. */
  get holder(): string {
    return `${this.base}.${this.gen}`;
  }

  get size(): number {
    return this.states.size;
  }

  /** A token from the local lease, a refusal remembered from the store, or null: ask the store. */
  take(bucket: string): BucketView | null {
    const st = this.states.get(bucket);
    if (!st) return null;
    const t = this.now();
    if (st.left >= 1 && t < st.validUntil) {
      st.left -= 1;
      st.lastTake = t;
      return { ok: true, tokens: this.view(st, t), holder: this.holder };
    }
    if (t < st.refusedUntil) return { ok: false, tokens: this.view(st, t) };
    return null;
  }

  /** The store request in flight for this bucket, if any: wait for it before asking again. */
  pending(bucket: string): Promise<void> | null {
    return this.states.get(bucket)?.pending ?? null;
  }

  /** What to ask the store for: a chunk (slow start, doubling while the chunks run out) and the settlement of the last one. */
  request(bucket: string | null, limits: BucketLimits): LeaseRequest {
    const t = this.now();
    const st = bucket === null ? undefined : this.state(bucket, limits);
    const max = Math.max(1, Math.floor(limits.capacity * this.fraction));
    const want = st && st.lastGrant > 0 && t - st.lastGrantAt < this.useMs ? Math.min(max, st.lastGrant * 2) : 1;
    return this.outgoing(bucket, limits, st, want, t);
  }

  /** Applies the store's reply; when tokens were granted, the caller's request takes one. */
  settle(req: LeaseRequest, reply: LeaseReply, bucket = req.bucket): BucketView {
    req.done();
    const t = this.now();
    const st = bucket !== null && req.holder === this.holder ? this.state(bucket, req.limits) : undefined;
    if (!st) {
      // The lease belongs to an abandoned holder name: one token may still be used now (the store
      // counts it as leased), the rest is left to expire.
      return { ok: reply.granted >= 1, tokens: Math.max(0, reply.granted - 1) + reply.tokens };
    }
    st.outstanding += reply.granted;
    st.shared = reply.tokens;
    st.others = reply.others;
    st.syncAt = t;
    if (req.want === 0) return { ok: false, tokens: this.view(st, t) };
    if (reply.granted >= 1) {
      st.left += reply.granted;
      st.validUntil = Math.max(st.validUntil, req.sentAt + this.useMs);
      st.lastGrant = reply.granted;
      st.lastGrantAt = t;
      st.refusedUntil = 0;
      st.left -= 1;
      st.lastTake = t;
      return { ok: true, tokens: this.view(st, t) };
    }
    const rate = perMs(req.limits);
    st.refusedUntil = t + Math.min(1_000, Math.max(0, (1 - reply.tokens) / rate));
    return { ok: false, tokens: this.view(st, t) };
  }

  /** The store did not apply the request (an earlier refusal stopped it): undo it here. */
  abort(req: LeaseRequest): void {
    req.done();
    if (req.bucket === null || req.holder !== this.holder) return;
    const st = this.states.get(req.bucket);
    if (!st) return;
    st.outstanding += req.settle;
    st.left += req.unused;
  }

  /** A token taken by `take` that the request did not use after all (the IP dimension refused). */
  refund(bucket: string, taken: BucketView): void {
    const st = this.states.get(bucket);
    if (st && taken.ok && taken.holder === this.holder) st.left += 1;
  }

  /** The outcome is unknown (the query failed): start over under a new holder name; old leases expire. */
  fail(): void {
    this.gen++;
    this.states.clear();
  }

  /** Settlements for buckets left idle (or near the end of their lease); forgets empty ones. */
  idle(): LeaseRequest[] {
    const t = this.now();
    const out: LeaseRequest[] = [];
    for (const [bucket, st] of this.states) {
      if (st.pending) continue;
      const quiet = t - st.lastTake >= this.idleMs || t >= st.validUntil - this.idleMs;
      if (!quiet) continue;
      if (st.outstanding > 0 || st.left > 0) out.push(this.outgoing(bucket, st.limits, st, 0, t));
      else if (t >= st.refusedUntil && t - st.lastTake >= this.idleMs) this.states.delete(bucket);
    }
    return out;
  }

  private outgoing(bucket: string | null, limits: BucketLimits, st: State | undefined, want: number, t: number): LeaseRequest {
    let done = () => undefined as void;
    const req: LeaseRequest = { bucket, limits, want, settle: st?.outstanding ?? 0, unused: st?.left ?? 0, holder: this.holder, sentAt: t, done: () => done() };
    if (st) {
      // Everything held so far is settled by this request; the reply adds the new chunk.
      st.outstanding = 0;
      st.left = 0;
      const p = new Promise<void>((resolve) => {
        done = () => {
          if (st.pending === p) st.pending = null;
          resolve();
        };
      });
      st.pending = p;
    }
    return req;
  }

  private state(bucket: string, limits: BucketLimits): State {
    let st = this.states.get(bucket);
    if (!st) {
      st = { limits, left: 0, outstanding: 0, validUntil: 0, lastGrant: 0, lastGrantAt: 0, lastTake: this.now(), shared: limits.capacity, others: 0, syncAt: this.now(), refusedUntil: 0, pending: null };
      this.states.set(bucket, st);
    }
    st.limits = limits;
    return st;
  }

  /** What the client may still spend: this lease plus the shared bucket refilled since the last reply (floored by the caller). */
  private view(st: State, t: number): number {
    const left = t < st.validUntil ? st.left : 0;
    const shared = Math.min(st.limits.capacity - st.others - left, st.shared + Math.max(0, t - st.syncAt) * perMs(st.limits));
    return Math.max(0, left + Math.max(0, shared));
  }
}
