import type { PersistedSnapshot } from '../../machines/kit/step.ts';

/** What a process last saw of an actor row (under its lock or in its own write). */
export interface CachedActor {
  version: number;
  state: string;
  snapshot: PersistedSnapshot;
  merchant: string | null;
  mode: string | null;
}

/**
 * The last known row of recently used actors, bounded (least recently used goes first), so an
 * event for a hot actor can skip the locking read. Staleness is harmless: every write made
 * from a cached row carries a version check, and a miss falls back to the locked path.
 */
export class SnapshotCache {
  private readonly rows = new Map<string, CachedActor>();

  constructor(private readonly max = 4_096) {}

  get(id: string): CachedActor | undefined {
    const row = this.rows.get(id);
    if (row) {
      // Re-inserting moves the entry to the back of Map's insertion order: recency.
      this.rows.delete(id);
      this.rows.set(id, row);
    }
    return row;
  }

  /** Keeps the newer of what is cached and `row` (versions only grow). */
  set(id: string, row: CachedActor): void {
    const had = this.rows.get(id);
    if (had && had.version > row.version) return;
    this.rows.delete(id);
    this.rows.set(id, row);
    if (this.rows.size > this.max) this.rows.delete(this.rows.keys().next().value!);
  }

  delete(id: string): void {
    this.rows.delete(id);
  }

  get size(): number {
    return this.rows.size;
  }
}
