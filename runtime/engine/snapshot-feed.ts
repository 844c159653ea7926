import type { Bus, Subscription } from '../bus/types.ts';
import type { SnapshotFeedItem } from './actor-types.ts';

type Listener = (item: SnapshotFeedItem) => void;

const ownerKey = (kind: string, merchant: string, mode: string): string => `${kind} ${merchant} ${mode}`;

/** How long the bus subscription outlives the last listener (streams come and go). */
const LINGER_MS = 30_000;

/**
 * One bus subscription per process fanned out to any number of local listeners, so a
 * thousand open SSE streams cost one NATS subscription and no database reads. The
 * subscription exists only while someone listens (and a while after): every process emits
 * every commit's snapshot, and a process with no stream open would otherwise receive and
 * decode all of them, which cost the API's creates a NATS delivery and a JSON parse each.
 */
export class SnapshotFeed {
  private readonly byActor = new Map<string, Set<Listener>>();
  private readonly byOwner = new Map<string, Set<Listener>>();
  private readonly all = new Set<Listener>();
  private sub: Subscription | undefined;
  private started = false;
  private linger: NodeJS.Timeout | undefined;

  constructor(private readonly bus: Bus) {}

  start(): void {
    this.started = true;
    if (this.listenerCount() > 0) this.ensureSub();
  }

  /** Listen to one actor; returns the unsubscribe function. */
  subscribe(actorId: string, fn: Listener): () => void {
    return this.listen(this.byActor, actorId, fn);
  }

  /**
   * Listen to every actor of one kind, merchant and mode (a dashboard list that follows its
   * rows, including ones created after it opened); returns the unsubscribe function.
   */
  subscribeOwner(owner: { kind: string; merchant: string; mode: string }, fn: Listener): () => void {
    return this.listen(this.byOwner, ownerKey(owner.kind, owner.merchant, owner.mode), fn);
  }

  /** Adds a listener under a key of one of the keyed maps; its removal drops an emptied key. */
  private listen(map: Map<string, Set<Listener>>, key: string, fn: Listener): () => void {
    let set = map.get(key);
    if (!set) map.set(key, (set = new Set()));
    set.add(fn);
    this.ensureSub();
    return () => {
      set.delete(fn);
      if (set.size === 0) map.delete(key);
      this.maybeLinger();
    };
  }

  /** Listen to every actor (visualizer). */
  subscribeAll(fn: Listener): () => void {
    this.all.add(fn);
    this.ensureSub();
    return () => {
      this.all.delete(fn);
      this.maybeLinger();
    };
  }

  /**
   * Resolves once the bus delivers to this process: a reader that subscribes, awaits this,
   * then reads the current state misses no later version.
   */
  async ready(): Promise<void> {
    await this.sub?.ready;
  }

  listenerCount(): number {
    let n = this.all.size;
    for (const s of this.byActor.values()) n += s.size;
    for (const s of this.byOwner.values()) n += s.size;
    return n;
  }

  async stop(): Promise<void> {
    this.started = false;
    clearTimeout(this.linger);
    const sub = this.sub;
    this.sub = undefined;
    await sub?.stop();
  }

  private ensureSub(): void {
    clearTimeout(this.linger);
    this.linger = undefined;
    if (!this.started || this.sub) return;
    this.sub = this.bus.listen('snap.>', (_subject, data) => {
      const item = data as SnapshotFeedItem;
      for (const l of this.byActor.get(item.id) ?? []) l(item);
      if (this.byOwner.size > 0 && item.merchant !== null && item.mode !== null) {
        for (const l of this.byOwner.get(ownerKey(item.kind, item.merchant, item.mode)) ?? []) l(item);
      }
      for (const l of this.all) l(item);
    });
  }

  private maybeLinger(): void {
    if (this.listenerCount() > 0 || !this.sub) return;
    clearTimeout(this.linger);
    this.linger = setTimeout(() => {
      this.linger = undefined;
      if (this.listenerCount() > 0) return;
      const sub = this.sub;
      this.sub = undefined;
      void sub?.stop();
    }, LINGER_MS);
    this.linger.unref();
  }
}
