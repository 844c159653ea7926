import type { Bus, Subscription } from '../bus/types.ts';
import type { SnapshotFeedItem } from './actor-types.ts';

type Listener = (item: SnapshotFeedItem) => void;

/**
 * One bus subscription per process fanned out to any number of local listeners, so a
 * thousand open SSE streams cost one NATS subscription and no database reads.
 */
export class SnapshotFeed {
  private readonly byActor = new Map<string, Set<Listener>>();
  private readonly all = new Set<Listener>();
  private sub: Subscription | undefined;

  constructor(private readonly bus: Bus) {}

  start(): void {
    this.sub = this.bus.listen('snap.>', (_subject, data) => {
      const item = data as SnapshotFeedItem;
      for (const l of this.byActor.get(item.id) ?? []) l(item);
      for (const l of this.all) l(item);
    });
  }

  /** Listen to one actor; returns the unsubscribe function. */
  subscribe(actorId: string, fn: Listener): () => void {
    let set = this.byActor.get(actorId);
    if (!set) this.byActor.set(actorId, (set = new Set()));
    set.add(fn);
    return () => {
      set.delete(fn);
      if (set.size === 0) this.byActor.delete(actorId);
    };
  }

  /** Listen to every actor (visualizer). */
  subscribeAll(fn: Listener): () => void {
    this.all.add(fn);
    return () => this.all.delete(fn);
  }

  listenerCount(): number {
    let n = this.all.size;
    for (const s of this.byActor.values()) n += s.size;
    return n;
  }

  async stop(): Promise<void> {
    await this.sub?.stop();
  }
}
