/**
 * The scanner (DESIGN §5 "Scanner"). A listing's probe timer fires `listing.probe_due`; the
 * timer row is claimed by one sweeper and the firing is applied once (its event id carries
 * the timer's generation), so exactly one process sees that commit applied, and only that
 * process probes, after the commit, outside any transaction. The probe waits for a slot
 * (bounded concurrency) and its result goes back to the actor as `listing.probed`. Nothing
 * here holds an actor's lock while the network is slow.
 */
import { randomUUID } from 'node:crypto';
import type { EventBase } from '../../../machines/kit/durable.ts';
import { ownerGeneration, termsDigest, type ListingContext } from '../../../machines/listing/context.ts';
import type { ListingEvent } from '../../../machines/listing/events.ts';
import { PROBE_TIMER } from '../../../machines/listing/machine.ts';
import { probeEntry } from '../../../machines/listing/rules.ts';
import { DEFAULT_PROBE_INTERVAL_MS } from '../../../machines/listing/score.ts';
import type { ScanEntry } from '../../../machines/listing/score.ts';
import type { Db } from '../../../storage/db.ts';
import type { ActorHost } from '../../engine/actor-host.ts';
import type { ApplyResult } from '../../engine/actor-types.ts';
import type { ForwardOptions } from '../forward.ts';
import type { UsdcToken } from '../lanes/usdc-ledger.ts';
import { LISTING_KIND } from '../listings.ts';
import { probe, type ProbeResult, type ProbeTarget } from './probe.ts';
import { Semaphore } from './semaphore.ts';

export interface ScannerOptions {
  /** The webhook SSRF rules and the ANMPAY_ALLOW_PRIVATE_WEBHOOKS switch; `timeoutMs` per probe. */
  forward: ForwardOptions;
  /** Probes in flight at once in this process. */
  concurrency?: number;
  /** Time between rounds (default 10 min) and the most added to it at random, so listings drift apart. */
  intervalMs?: number;
  jitterMs?: number;
  /** The USDC lane's token (contract and chain) a seller's 402 must name; USDC on Base when absent. */
  usdcToken?: UsdcToken | undefined;
  clock?: () => number;
  random?: () => number;
  /** A probe failed to be recorded (the next round will probe again). */
  onError?: (err: unknown) => void;
  /** A probe's result was recorded on its listing (metrics, the bench). */
  onProbed?: (resourceId: string, result: ProbeResult) => void;
}

export const DEFAULT_SCAN_CONCURRENCY = 64;

export class Scanner {
  private readonly slots: Semaphore;
  /** Rounds this process probed: what the two-runtime test compares. */
  readonly probed: string[] = [];
  private keepRounds = false;
  private inFlight = 0;
  private readonly drained: Array<() => void> = [];
  /** Probes wait for this: a seller this process serves itself is not probed before it listens. */
  private ready: Promise<void> = Promise.resolve();

  constructor(
    private readonly db: Db,
    private readonly host: ActorHost,
    private readonly opts: ScannerOptions,
  ) {
    this.slots = new Semaphore(opts.concurrency ?? DEFAULT_SCAN_CONCURRENCY);
  }

  /** The ActorHost hook: a round applied in this process is probed by this process. */
  readonly afterCommit = (result: ApplyResult, event: EventBase): void => {
    if (result.kind !== LISTING_KIND || event.type !== 'listing.probe_due' || result.outcome !== 'applied') return;
    const ctx = result.snapshot.context as ListingContext;
    // Not awaited: the actor's event is acknowledged at once and the probe waits for a slot.
    void this.probeAndRecord(result.actorId, ctx, `probed:${event.id}`).catch((err: unknown) => this.opts.onError?.(err));
  };

  /**
   * Gives every listing without a probe timer (one registered before the scanner existed, or
   * whose row was lost) its rounds back, the first within one interval at random so a start
   * with many of them does not probe them at once. Run on start by each runtime that scans.
   * The event's id names the listing's version as read: processes starting together tell a
   * listing the same event, applied once; one that gained a timer meanwhile is rescheduled,
   * never doubled (one timer row per listing and name). Returns how many this process resumed;
   * `signal` stops it between listings (a process stopping).
   */
  async resumeRounds(opts: { batch?: number; signal?: AbortSignal } = {}): Promise<number> {
    const batch = opts.batch ?? 500;
    const interval = this.opts.intervalMs ?? DEFAULT_PROBE_INTERVAL_MS;
    let after = '';
    let resumed = 0;
    for (;;) {
      const { rows } = await this.db.query<{ id: string; version: number }>(
        `SELECT a.id, a.version FROM actors a
          WHERE a.kind = $1 AND a.id > $2 AND NOT EXISTS (SELECT 1 FROM timers t WHERE t.actor_id = a.id AND t.name = $3)
          ORDER BY a.id LIMIT $4`,
        [LISTING_KIND, after, PROBE_TIMER, batch],
      );
      for (const r of rows) {
        if (opts.signal?.aborted) return resumed;
        const event = { type: 'listing.resume_probes', id: `resume-probes:${r.version}`, at: this.now(), probe_in_ms: Math.floor((this.opts.random ?? Math.random)() * interval) } satisfies ListingEvent;
        if ((await this.host.apply({ kind: LISTING_KIND, id: r.id }, event)).outcome === 'applied') resumed++;
      }
      if (rows.length < batch) return resumed;
      after = rows.at(-1)!.id;
    }
  }

  /**
   * Holds every probe until `until` settles: the demo seller starts after the runtime, and rounds
   * come due at once on a restart, so without the hold its listings would record `unreachable`.
   */
  holdProbes(until: Promise<unknown>): void {
    this.ready = until.then(() => undefined, () => undefined);
  }

  /** Keeps the ids of the rounds probed (tests). */
  recordRounds(): void {
    this.keepRounds = true;
  }

  /** `anmpay market scan <id>`: probes now and records the result like a round's. Null for an unknown listing. */
  async scanNow(resourceId: string): Promise<{ scan: ScanEntry; status: string } | null> {
    const { rows } = await this.db.query<{ snapshot: { context: ListingContext } }>(`SELECT snapshot FROM actors WHERE id = $1 AND kind = $2`, [resourceId, LISTING_KIND]);
    const ctx = rows[0]?.snapshot.context;
    if (!ctx) return null;
    // The probe's own result: one judged against terms changed meanwhile is not recorded (ADR 0088), and the listing's newest scan is another.
    const { applied, scan } = await this.probeAndRecord(resourceId, ctx, `scan:${randomUUID()}`);
    return { scan, status: applied.status };
  }

  private async probeAndRecord(resourceId: string, ctx: ListingContext, eventId: string): Promise<{ applied: ApplyResult; scan: ScanEntry }> {
    this.inFlight++;
    try {
      return await this.probeOnce(resourceId, ctx, eventId);
    } finally {
      if (--this.inFlight === 0) for (const d of this.drained.splice(0)) d();
    }
  }

  private async probeOnce(resourceId: string, ctx: ListingContext, eventId: string): Promise<{ applied: ApplyResult; scan: ScanEntry }> {
    const target: ProbeTarget = { endpoint: ctx.endpoint, method: ctx.method, assets: ctx.assets };
    await this.ready;
    const { at, result } = await this.slots.run(async () => {
      const started = this.now();
      return { at: started, result: await probe(target, this.opts.forward, this.opts.usdcToken).catch((e: unknown): ProbeResult => ({ outcome: 'unreachable', http_status: null, latency_ms: null, detail: String(e).slice(0, 300) })) };
    });
    if (this.keepRounds) this.probed.push(`${resourceId}:${eventId}`);
    const interval = this.opts.intervalMs ?? DEFAULT_PROBE_INTERVAL_MS;
    const jitter = Math.floor((this.opts.random ?? Math.random)() * (this.opts.jitterMs ?? interval / 10));
    // Judged against this ownership's terms as read: a probe in flight while the listing changes hands, even back
    // to the same key, or while its owner updates its terms, is not about the new ones (ADR 0072, 0077, 0088).
    const event = {
      type: 'listing.probed', id: eventId, at, ...result, next_probe_in_ms: interval + jitter,
      provider_id: ctx.provider_id, owner_generation: ownerGeneration(ctx), terms_digest: termsDigest(target),
    } satisfies ListingEvent;
    const applied = await this.host.apply({ kind: LISTING_KIND, id: resourceId }, event);
    this.opts.onProbed?.(resourceId, result);
    return { applied, scan: probeEntry(event) };
  }

  /** Probes waiting, running or being recorded in this process. */
  get pending(): number {
    return this.inFlight;
  }

  /** Resolves once no probe waits, runs or is being recorded (tests, the bench, a drain before stop). */
  idle(): Promise<void> {
    return this.inFlight === 0 ? Promise.resolve() : new Promise((resolve) => this.drained.push(resolve));
  }

  private now(): number {
    return (this.opts.clock ?? Date.now)();
  }
}
