/**
 * Fan-out of the snapshot feed to checkout event streams. Per intent with at least one open
 * stream it holds one feed listener and the latest snapshot seen; the first stream for an
 * intent costs one database read (shared by streams that arrive while it runs), later
 * streams cost none, and live updates never touch the database. The feed itself is one bus
 * subscription per process (runtime/engine/snapshot-feed.ts).
 */
import type { PaymentIntentContext } from '../../machines/payment-intent/context.ts';
import type { SnapshotFeedItem } from '../../runtime/engine/actor-types.ts';
import type { SnapshotFeed } from '../../runtime/engine/snapshot-feed.ts';
import type { CheckoutRow } from '../../runtime/merchant/checkout-reads.ts';

export interface IntentState {
  version: number;
  status: string;
  ctx: PaymentIntentContext;
  /** Type of the event that produced this version, when it came from the feed. */
  event?: string;
}

export type StateListener = (s: IntentState) => void;

interface Entry {
  listeners: Set<StateListener>;
  /** Streams between "asked" and "attached" keep the entry alive. */
  pending: number;
  latest: IntentState | null;
  ready: Promise<void>;
  unsubscribe: () => void;
}

export interface Attached {
  current: IntentState;
  detach: () => void;
}

export class CheckoutHub {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly feed: Pick<SnapshotFeed, 'subscribe'> & Partial<Pick<SnapshotFeed, 'ready'>>,
    private readonly read: (id: string) => Promise<CheckoutRow | null>,
  ) {}

  /** Open streams across intents (for limits and tests). */
  get streams(): number {
    let n = 0;
    for (const e of this.entries.values()) n += e.listeners.size;
    return n;
  }

  get intents(): number {
    return this.entries.size;
  }

  /**
   * Current state of the intent and a listener for every later version; null for an unknown
   * intent. The feed listener is in place before the read starts, so nothing committed after
   * the read is missed, and whichever of the two is newer wins.
   */
  async attach(id: string, listener: StateListener): Promise<Attached | null> {
    const entry = this.entries.get(id) ?? this.open(id);
    entry.pending++;
    try {
      await entry.ready;
    } finally {
      entry.pending--;
    }
    if (!entry.latest) {
      this.release(id, entry);
      return null;
    }
    // Synchronously after reading `latest`: no feed item can slip in between.
    entry.listeners.add(listener);
    return {
      current: entry.latest,
      detach: () => {
        entry.listeners.delete(listener);
        this.release(id, entry);
      },
    };
  }

  private open(id: string): Entry {
    const entry: Entry = { listeners: new Set(), pending: 0, latest: null, ready: Promise.resolve(), unsubscribe: () => undefined };
    this.entries.set(id, entry);
    entry.unsubscribe = this.feed.subscribe(id, (item) => this.onItem(entry, item));
    // The bus subscription may be new (the feed holds one only while someone listens).
    entry.ready = Promise.resolve(this.feed.ready?.())
      .then(() => this.read(id))
      .then(
      (row) => {
        if (row && (!entry.latest || row.version > entry.latest.version)) {
          entry.latest = { version: row.version, status: row.state, ctx: row.snapshot.context as PaymentIntentContext };
        }
      },
      (err: unknown) => {
        // A failed read must not stay cached for the next stream.
        this.entries.delete(id);
        entry.unsubscribe();
        throw err;
      },
    );
    return entry;
  }

  private onItem(entry: Entry, item: SnapshotFeedItem): void {
    if (item.kind !== 'payment_intent') return;
    // The bus may deliver out of order across processes; versions only grow.
    if (entry.latest && item.version <= entry.latest.version) return;
    entry.latest = { version: item.version, status: item.status, ctx: item.snapshot.context as PaymentIntentContext, event: item.event };
    for (const l of entry.listeners) l(entry.latest);
  }

  private release(id: string, entry: Entry): void {
    if (entry.listeners.size > 0 || entry.pending > 0) return;
    if (this.entries.get(id) === entry) this.entries.delete(id);
    entry.unsubscribe();
  }

  /** Drops every entry (server shutdown). */
  clear(): void {
    for (const [id, e] of this.entries) {
      e.unsubscribe();
      this.entries.delete(id);
    }
  }
}
