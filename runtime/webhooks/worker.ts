import type { Db } from '../../storage/db.ts';
import { Poller } from '../engine/poller.ts';
import { recordWebhookDelivery } from '../ops/metrics.ts';
import { retryDelayMs, type ScheduleOptions } from './schedule.ts';
import { Sender, type SendResult } from './sender.ts';
import { SerialWrites } from './serial-writes.ts';
import { signatureHeader } from './signing.ts';
import { CLAIM_MAX, CLAIM_SQL, DISABLE_SQL, RECORD_SQL, type ClaimedDelivery, type AttemptOutcome } from './worker-sql.ts';

/**
 * Sends due deliveries. A claim (FOR UPDATE SKIP LOCKED) bumps `attempts` and sets
 * `lease_until` in one statement, so no other process (or this one) takes the same delivery
 * until the lease runs out; a process killed mid-send leaves the row to come due again
 * after the lease and be sent as the next attempt, same event id.
 * Results are written in batches, fenced by the attempt number; a slot is freed only once
 * its result is durable, which bounds memory and keeps a slow receiver to its own slots.
 */

export interface DeliveryWorkerOptions {
  allowPrivate: boolean;
  /** Per-attempt HTTP timeout (spec: 10 s). */
  timeoutMs?: number;
  /** Sends in flight in this process, all endpoints together. */
  concurrency?: number;
  /** Sends in flight in this process for one endpoint. */
  perEndpoint?: number;
  /** How long a claim keeps a delivery from other workers; must exceed timeoutMs. */
  leaseMs?: number;
  pollMs?: number;
  schedule?: ScheduleOptions;
  now?: () => number;
  /** Fault tests: runs when a claimed attempt is about to be sent. */
  beforeSend?: (d: ClaimedDelivery) => void | Promise<void>;
  onError?: (err: unknown) => void;
}

export interface WorkerStats {
  attempts: number;
  succeeded: number;
  retried: number;
  failed: number;
  disabled: number;
}

export class DeliveryWorker {
  private readonly sender: Sender;
  private readonly inflightByEndpoint = new Map<string, number>();
  private inflight = 0;
  private readonly poller: Poller;
  private readonly outcomes: SerialWrites<AttemptOutcome>;
  private idle: Array<() => void> = [];
  readonly stats: WorkerStats = { attempts: 0, succeeded: 0, retried: 0, failed: 0, disabled: 0 };

  constructor(
    private readonly db: Db,
    private readonly opts: DeliveryWorkerOptions,
  ) {
    // The agent never queues: this worker's own limits decide what is in flight.
    this.sender = new Sender({ allowPrivate: opts.allowPrivate, maxSockets: this.concurrency });
    this.outcomes = new SerialWrites((batch) => this.write(batch), 1000);
    this.poller = new Poller(() => this.pump(), { pollMs: opts.pollMs ?? 250, ...(opts.onError ? { onError: opts.onError } : {}) });
  }

  private get concurrency(): number {
    return this.opts.concurrency ?? 256;
  }

  private get perEndpoint(): number {
    return this.opts.perEndpoint ?? 16;
  }

  private now(): number {
    return (this.opts.now ?? Date.now)();
  }

  start(): void {
    this.poller.start();
  }

  /** Look for due work now (after intake, a redeliver or a freed slot). */
  nudge(): void {
    this.poller.nudge();
  }

  /** Claims what there is room for and starts sending it; true when more may be due at once. */
  private async pump(): Promise<boolean> {
    const free = this.concurrency - this.inflight;
    if (free <= 0) return false;
    const claimed = await this.claim(free);
    for (const d of claimed) void this.deliver(d);
    // Only a claim cut short by capacity may have left due work behind; otherwise wait for a
    // nudge (intake, a freed slot) or the poll, instead of a tight loop of tiny claims.
    return claimed.length >= Math.min(free, CLAIM_MAX) && this.inflight < this.concurrency;
  }

  private async claim(free: number): Promise<ClaimedDelivery[]> {
    const saturated: string[] = [];
    const room: Record<string, number> = {};
    for (const [ep, n] of this.inflightByEndpoint) {
      if (n >= this.perEndpoint) saturated.push(ep);
      else room[ep] = this.perEndpoint - n;
    }
    const now = this.now();
    const leaseMs = this.opts.leaseMs ?? Math.max(60_000, (this.opts.timeoutMs ?? 10_000) * 3);
    // One statement, so one implicit transaction: no BEGIN/COMMIT round trips.
    const { rows } = await this.db.query<ClaimedDelivery>(CLAIM_SQL, [
      new Date(now),
      saturated,
      // Scan only as many as can be sent: every scanned row gets a row lock (a write).
      Math.min(free, CLAIM_MAX),
      JSON.stringify(room),
      this.perEndpoint,
      free,
      new Date(now + leaseMs),
    ]);
    for (const d of rows) {
      this.inflight += 1;
      this.inflightByEndpoint.set(d.endpoint, (this.inflightByEndpoint.get(d.endpoint) ?? 0) + 1);
    }
    return rows;
  }

  private async deliver(d: ClaimedDelivery): Promise<void> {
    if (d.lost_attempt !== null) void this.record(this.lostAttempt(d)).catch((err: unknown) => this.opts.onError?.(err));
    let outcome: AttemptOutcome;
    try {
      await this.opts.beforeSend?.(d);
      outcome = await this.attempt(d);
    } catch (err) {
      outcome = this.outcome(d, { status: null, latencyMs: 0, excerpt: null, error: String(err).slice(0, 300) }, this.now());
    }
    // Retry writing until it sticks: the slot stays taken meanwhile, so memory stays bounded.
    for (let wait = 100; ; wait = Math.min(wait * 2, 5_000)) {
      try {
        await this.record(outcome);
        break;
      } catch (err) {
        this.opts.onError?.(err);
        if (this.poller.isStopped) break;
        await new Promise((r) => setTimeout(r, wait));
      }
    }
    this.inflight -= 1;
    const n = (this.inflightByEndpoint.get(d.endpoint) ?? 1) - 1;
    if (n <= 0) this.inflightByEndpoint.delete(d.endpoint);
    else this.inflightByEndpoint.set(d.endpoint, n);
    if (this.inflight === 0) for (const w of this.idle.splice(0)) w();
    this.nudge();
  }

  private async attempt(d: ClaimedDelivery): Promise<AttemptOutcome> {
    const signedAt = this.now();
    if (d.endpoint_status !== 'active') {
      return this.outcome(d, { status: null, latencyMs: 0, excerpt: null, error: 'endpoint disabled' }, signedAt, 'disabled');
    }
    const secrets = d.secrets ?? [];
    if (secrets.length === 0) return this.outcome(d, { status: null, latencyMs: 0, excerpt: null, error: 'no active signing secret' }, signedAt);
    const ts = Math.floor(signedAt / 1000);
    const res = await this.sender.send({
      url: d.url,
      body: d.body,
      timeoutMs: this.opts.timeoutMs ?? 10_000,
      headers: {
        'Content-Type': 'application/json',
        'User-Agent': 'ANM-Pay-Webhooks/1.0',
        'Service-Signature': signatureHeader(secrets, ts, d.event_id, d.body),
        'Service-Event-ID': d.event_id,
        'Service-Timestamp': String(ts),
      },
    });
    return this.outcome(d, res, signedAt);
  }

  /** Log line for an attempt whose worker was lost; its attempt number fences it off the delivery row. */
  private lostAttempt(d: ClaimedDelivery): AttemptOutcome {
    return {
      id: d.id,
      attempt: d.lost_attempt!,
      manual: false,
      url: d.url,
      endpoint: d.endpoint,
      http_status: null,
      latency_ms: null,
      response: null,
      error: 'no result recorded: the worker stopped during the attempt; the lease expired and it was sent again',
      signed_at: null,
      status: 'pending',
      next_at: null,
      gone: false,
    };
  }

  private outcome(d: ClaimedDelivery, res: SendResult, signedAt: number, forced?: 'disabled'): AttemptOutcome {
    const base = {
      id: d.id,
      attempt: d.attempt,
      manual: d.manual,
      url: d.url,
      endpoint: d.endpoint,
      http_status: res.status,
      latency_ms: res.latencyMs,
      response: res.excerpt,
      error: res.error,
      signed_at: signedAt,
    };
    this.stats.attempts += 1;
    if (forced === 'disabled') {
      this.stats.disabled += 1;
      recordWebhookDelivery('disabled');
      return { ...base, status: 'disabled', next_at: null, gone: false };
    }
    if (res.status !== null && res.status >= 200 && res.status < 300) {
      this.stats.succeeded += 1;
      recordWebhookDelivery('succeeded');
      return { ...base, status: 'succeeded', next_at: null, gone: false };
    }
    if (res.status === 410) {
      this.stats.disabled += 1;
      recordWebhookDelivery('disabled');
      return { ...base, status: 'disabled', next_at: null, gone: true };
    }
    const delay = retryDelayMs(d.attempt, this.opts.schedule);
    if (delay === null) {
      this.stats.failed += 1;
      recordWebhookDelivery('failed');
      return { ...base, status: 'failed', next_at: null, gone: false };
    }
    this.stats.retried += 1;
    recordWebhookDelivery('retried');
    return { ...base, status: 'pending', next_at: new Date(this.now() + delay).toISOString(), gone: false };
  }

  /** Queues an outcome for the next batched write; resolves once it is committed. */
  private record(o: AttemptOutcome): Promise<void> {
    return this.outcomes.push(o);
  }

  private async write(batch: AttemptOutcome[]): Promise<void> {
    const at = new Date(this.now());
    const gone = [...new Set(batch.filter((o) => o.gone).map((o) => o.endpoint))];
    if (gone.length === 0) {
      await this.db.query(RECORD_SQL, [JSON.stringify(batch), at]);
      return;
    }
    const o = batch.find((x) => x.gone)!;
    await this.db.tx(async (q) => {
      await q.query(RECORD_SQL, [JSON.stringify(batch), at]);
      await q.query(DISABLE_SQL, [gone, `410 Gone from ${o.url} at ${at.toISOString()}`, at]);
    });
  }

  /** Resolves when nothing is in flight (tests, drain). */
  async drained(): Promise<void> {
    if (this.inflight === 0) return;
    await new Promise<void>((r) => this.idle.push(r));
  }

  /** Stops claiming, lets the sends in flight finish and their results be written. */
  async stop(): Promise<void> {
    await this.poller.stop();
    await this.drained();
    this.sender.close();
  }
}
