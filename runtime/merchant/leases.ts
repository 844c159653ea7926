/**
 * Token leases (ADR 0004): this process's share of the shared token buckets. Each bucket
 * (`ip:<address>`, `key:<api key id>`) lives in PostgreSQL (`rate_buckets`, `anm_lease`,
 * migration 0002); a process takes tokens from it in chunks and serves requests from the chunk
 * without a round trip. The store counts what each holder has leased, and refills a bucket only
 * up to what no live lease holds, so the tokens let go by the shared bucket and used by all
 * processes together never exceed an exact bucket's (capacity + rate x time, over any window).
 *
 * This class is the process side and does no I/O: it answers from the local lease, or says
 * what to ask the store (`LeaseRequest`) and applies the store's answer (`LeaseReply`).
 * Every chunk is its own lease in the store, released by name with the tokens it did not use,
 * so several requests may be in flight at once and a lease the store has already voided is
 * never credited twice. A chunk is used only until `useMs` after its request was sent (the
 * store keeps the lease live for `ttlMs` after it applied the request, and `useMs` < `ttlMs`).
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
  /** When the token came from a local lease: the holder name it belongs to (see `refund`). */
  holder?: string;
  /** When granted: the lease (`LeaseRequest.lease`) whose chunk supplied the token. */
  chunk?: string;
}

export interface LeaseRequest {
  /** The name of the lease asked for (unique). */
  lease: string;
  /** Null while the bucket is not known yet (a key seen for the first time). */
  bucket: string | null;
  limits: BucketLimits;
  /** Tokens asked for; 0 only releases. */
  want: number;
  /** Leases released, each with the tokens it did not use. */
  release: string[];
  unused: number[];
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
  /** How long this process uses a chunk, counted from before its request was sent (< ttlMs). */
  useMs?: number;
  /** A bucket untouched this long has its lease settled by the sweep. */
  idleMs?: number;
  /** Largest chunk, as a fraction of capacity (at least 1 token). */
  fraction?: number;
  now?: () => number;
  holder?: string;
}

/** One lease: tokens still to hand out (none once past `until`); released with the next request. */
interface Chunk {
  lease: string;
  n: number;
  /** Used only before this (local time). */
  until: number;
}

interface State {
  limits: BucketLimits;
  /** This holder's unreleased leases on the bucket, soonest deadline first. */
  chunks: Chunk[];
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
const usable = (cs: Chunk[], t: number) => cs.reduce((a, c) => (t < c.until ? a + c.n : a), 0);
const released = new WeakMap<LeaseRequest, Chunk[]>();

export class LeaseBook {
  readonly ttlMs: number;
  private readonly useMs: number;
  private readonly idleMs: number;
  private readonly fraction: number;
  private readonly now: () => number;
  private readonly base: string;
  private gen = 0;
  private seq = 0;
  private readonly states = new Map<string, State>();

  constructor(opts: LeaseOptions = {}) {
    this.ttlMs = opts.ttlMs ?? 10_000;
    this.useMs = Math.min(opts.useMs ?? this.ttlMs / 2, this.ttlMs * 0.9);
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
    const c = st.chunks.find((x) => x.n > 0 && t < x.until);
    if (c) {
      c.n -= 1;
      st.lastTake = t;
      return { ok: true, tokens: this.view(st, t), holder: this.holder, chunk: c.lease };
    }
    if (t < st.refusedUntil) return { ok: false, tokens: this.view(st, t) };
    return null;
  }

  /** The store request in flight for this bucket, if any: wait for it before asking again. */
  pending(bucket: string): Promise<void> | null {
    return this.states.get(bucket)?.pending ?? null;
  }

  /** What to ask the store for: a chunk (slow start, doubling while chunks run out), releasing the ones held. */
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
    const until = req.sentAt + this.useMs;
    const st = bucket !== null && req.holder === this.holder ? this.state(bucket, req.limits) : undefined;
    if (!st) {
      // Granted to an abandoned holder name: one token may still be used (the store counts it as
      // leased until well after `until`); the rest is left to expire there.
      return { ok: reply.granted >= 1 && t < until, tokens: Math.max(0, reply.granted - 1) + reply.tokens, chunk: req.lease };
    }
    st.shared = reply.tokens;
    st.others = reply.others;
    st.syncAt = t;
    if (reply.granted < 1) {
      if (req.want > 0) st.refusedUntil = t + Math.min(1_000, Math.max(0, (1 - reply.tokens) / perMs(req.limits)));
      return { ok: false, tokens: this.view(st, t) };
    }
    // The lease stays held (even spent) until a later request releases it. A reply later than its
    // deadline is only released: the store was too slow, the request is refused.
    const ok = t < until;
    this.add(st, { lease: req.lease, n: reply.granted - (ok ? 1 : 0), until });
    if (!ok) return { ok: false, tokens: this.view(st, t) };
    st.lastGrant = reply.granted;
    st.lastGrantAt = t;
    st.refusedUntil = 0;
    st.lastTake = t;
    return { ok: true, tokens: this.view(st, t), chunk: req.lease };
  }

  /** The store did not apply the request (an earlier refusal stopped it): undo it here. */
  abort(req: LeaseRequest): void {
    req.done();
    if (req.bucket === null || req.holder !== this.holder) return;
    const st = this.states.get(req.bucket);
    if (st) for (const c of released.get(req) ?? []) this.add(st, c);
  }

  /** A token taken by `take` that the request did not use after all (the IP dimension refused). */
  refund(bucket: string, taken: BucketView): void {
    const st = this.states.get(bucket);
    if (!st || !taken.ok || taken.holder !== this.holder || taken.chunk === undefined) return;
    const c = st.chunks.find((x) => x.lease === taken.chunk);
    if (c) c.n += 1;
  }

  /** The outcome is unknown (the query failed): start over under a new holder name; old leases expire. */
  fail(): void {
    this.gen++;
    this.states.clear();
  }

  /** Releases for buckets left idle (or with chunks near their deadline); forgets empty ones. */
  idle(): LeaseRequest[] {
    const t = this.now();
    const out: LeaseRequest[] = [];
    for (const [bucket, st] of this.states) {
      if (st.pending) continue;
      const quiet = t - st.lastTake >= this.idleMs || st.chunks.some((c) => t >= c.until - this.idleMs);
      if (!quiet) continue;
      if (st.chunks.length > 0) out.push(this.outgoing(bucket, st.limits, st, 0, t));
      else if (t >= st.refusedUntil && t - st.lastTake >= this.idleMs) this.states.delete(bucket);
    }
    return out;
  }

  private outgoing(bucket: string | null, limits: BucketLimits, st: State | undefined, want: number, t: number): LeaseRequest {
    let done = () => undefined as void;
    const chunks = st?.chunks ?? [];
    const req: LeaseRequest = {
      lease: `${this.holder}:${++this.seq}`,
      bucket,
      limits,
      want,
      release: chunks.map((c) => c.lease),
      unused: chunks.map((c) => c.n),
      holder: this.holder,
      sentAt: t,
      done: () => done(),
    };
    if (st) {
      // Every lease held so far is released by this request; the reply adds the new one.
      released.set(req, chunks);
      st.chunks = [];
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
      const t = this.now();
      st = { limits, chunks: [], lastGrant: 0, lastGrantAt: 0, lastTake: t, shared: limits.capacity, others: 0, syncAt: t, refusedUntil: 0, pending: null };
      this.states.set(bucket, st);
    }
    st.limits = limits;
    return st;
  }

  /** Keeps chunks ordered by deadline, the soonest used first. */
  private add(st: State, c: Chunk): void {
    const i = st.chunks.findIndex((x) => x.until > c.until);
    if (i < 0) st.chunks.push(c);
    else st.chunks.splice(i, 0, c);
  }

  /** What the client may still spend: this lease plus the shared bucket refilled since the last reply (floored by the caller). */
  private view(st: State, t: number): number {
    const left = usable(st.chunks, t);
    const shared = Math.min(st.limits.capacity - st.others - left, st.shared + Math.max(0, t - st.syncAt) * perMs(st.limits));
    return Math.max(0, left + Math.max(0, shared));
  }
}
