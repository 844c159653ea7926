/**
 * The loop behind every background claimer (outbox relay, timer sweeper, webhook worker): run a
 * step, wait, run again. One step at a time; the wait depends on what the last step said:
 *   - it found more work ready (a full batch): the next step at once;
 *   - nudged while it ran (a commit that wrote work): after `gatherMs`;
 *   - otherwise: after `pollMs`, the safety net for work nobody nudged about;
 *   - it failed: after a back-off, `pollMs` doubled per consecutive failure up to
 *     `maxBackoffMs`, so a database or bus that is down is not hammered. A failure never ends
 *     the loop.
 * A nudge while idle brings the next step forward to `gatherMs` from now (never later than it
 * was due): under load one step then takes the work of many commits, where a step per commit
 * would pay a transaction and its round trips for a few rows each. A nudge does not cut a
 * back-off short.
 */
export interface PollerOptions {
  pollMs: number;
  /** How long a nudge waits for more work before the step runs (default 0: at once). */
  gatherMs?: number;
  /** Longest wait after consecutive failures (default 2 s, and never below `pollMs`). */
  maxBackoffMs?: number;
  onError?: (err: unknown) => void;
}

/** One step of work; resolves true when more is ready at once (its batch was full). */
export type PollStep = () => Promise<boolean>;

export class Poller {
  private timer: NodeJS.Timeout | undefined;
  /** When the scheduled step is due (ms since the epoch); Infinity when none is. */
  private dueAt = Infinity;
  private busy = false;
  private again = false;
  private stopped = true;
  private failures = 0;
  private current: Promise<void> = Promise.resolve();

  constructor(
    private readonly step: PollStep,
    private readonly opts: PollerOptions,
  ) {}

  get isStopped(): boolean {
    return this.stopped;
  }

  /** Starts the loop; the first step runs after `delayMs` (default at once). */
  start(delayMs = 0): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.failures = 0;
    this.schedule(delayMs);
  }

  /** Asks for a step soon: work was just written. */
  nudge(): void {
    if (this.stopped) return;
    if (this.busy) {
      this.again = true;
      return;
    }
    if (this.failures > 0) return;
    const gather = this.opts.gatherMs ?? 0;
    if (this.dueAt > Date.now() + gather) this.schedule(gather);
  }

  /** Stops scheduling steps and resolves once the step in progress, if any, has ended. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    this.dueAt = Infinity;
    await this.current;
  }

  private schedule(ms: number): void {
    clearTimeout(this.timer);
    this.dueAt = Date.now() + ms;
    this.timer = setTimeout(() => {
      this.dueAt = Infinity;
      // Chained: a step never overlaps the previous one, even across a stop and a restart.
      this.current = this.current.then(() => this.run());
    }, ms);
  }

  private async run(): Promise<void> {
    if (this.stopped) return;
    this.busy = true;
    let more = false;
    let failed = false;
    try {
      more = await this.step();
      this.failures = 0;
    } catch (err) {
      failed = true;
      this.failures += 1;
      try {
        this.opts.onError?.(err);
      } catch {
        // A failing error report must not end the loop.
      }
    } finally {
      this.busy = false;
    }
    if (this.stopped) return;
    const again = this.again;
    this.again = false;
    if (failed) this.schedule(this.backoffMs());
    else this.schedule(more ? 0 : again ? (this.opts.gatherMs ?? 0) : this.opts.pollMs);
  }

  private backoffMs(): number {
    const cap = Math.max(this.opts.pollMs, this.opts.maxBackoffMs ?? 2_000);
    return Math.min(cap, this.opts.pollMs * 2 ** Math.min(this.failures - 1, 30));
  }
}
