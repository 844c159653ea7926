/**
 * Feeds every open overview stream of this process from one place: one snapshot-feed listener
 * for all of them (each commit goes out at once as a `transition`), and one overview query set
 * per refresh, run when commits arrive (at most once per `minRefreshMs`) and every
 * `idleRefreshMs` for the lags, shared by every stream. So a stream costs no database read of
 * its own: 200 streams cost what one does.
 */
import type { SnapshotFeedItem } from '../../runtime/engine/actor-types.ts';
import type { Overview, TransitionItem } from '../../machines/kit/console-view.ts';

export interface OverviewListener {
  transition(t: TransitionItem): void;
  overview(o: Overview): void;
}

export interface OverviewHubOptions {
  feed: { subscribeAll(fn: (item: SnapshotFeedItem) => void): () => void };
  read: () => Promise<Overview>;
  minRefreshMs?: number;
  idleRefreshMs?: number;
  onError?: (err: unknown) => void;
}

export class OverviewHub {
  private readonly listeners = new Set<OverviewListener>();
  private unsubscribe: (() => void) | undefined;
  private timer: NodeJS.Timeout | undefined;
  private last: { at: number; value: Overview } | undefined;
  private inFlight: Promise<Overview> | undefined;
  private dirty = false;
  /** Overview reads run, for tests and the docs' claim. */
  reads = 0;

  constructor(private readonly o: OverviewHubOptions) {}

  get size(): number {
    return this.listeners.size;
  }

  /** Adds a stream; resolves with the overview it starts from (shared with the others). */
  async attach(l: OverviewListener): Promise<{ current: Overview; detach: () => void }> {
    this.listeners.add(l);
    this.unsubscribe ??= this.o.feed.subscribeAll((item) => this.onItem(item));
    this.arm();
    const detach = () => {
      this.listeners.delete(l);
      if (this.listeners.size === 0) this.stop();
    };
    try {
      return { current: await this.current(), detach };
    } catch (err) {
      detach();
      throw err;
    }
  }

  stop(): void {
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private async current(): Promise<Overview> {
    const min = this.o.minRefreshMs ?? 1000;
    if (this.last && Date.now() - this.last.at < min) return this.last.value;
    return this.refresh();
  }

  private refresh(): Promise<Overview> {
    this.inFlight ??= (async () => {
      try {
        this.reads++;
        const value = await this.o.read();
        this.last = { at: Date.now(), value };
        for (const l of this.listeners) l.overview(value);
        return value;
      } finally {
        this.inFlight = undefined;
      }
    })();
    return this.inFlight;
  }

  private onItem(item: SnapshotFeedItem): void {
    const t: TransitionItem = { actor_id: item.id, kind: item.kind, state: item.status, version: item.version, event: item.event };
    for (const l of this.listeners) l.transition(t);
    if (!this.dirty) {
      this.dirty = true;
      this.arm(this.o.minRefreshMs ?? 1000);
    }
  }

  /** Next refresh in `ms` (a sooner one replaces a later one). */
  private arm(ms = this.o.idleRefreshMs ?? 10_000): void {
    if (this.listeners.size === 0) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.dirty = false;
      this.refresh().then(
        () => this.arm(),
        (err: unknown) => {
          this.o.onError?.(err);
          this.arm();
        },
      );
    }, ms);
    this.timer.unref();
  }
}
