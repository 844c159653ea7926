/**
 * Writes of one shape submitted in the same event-loop turn, sent in one statement (ADR 0089
 * for creates, ADR 0090 for the optimistic path's updates): the requests read in one poll
 * phase share one round trip, one backend wake-up, one executor start and one commit instead
 * of paying one each. A batch of one is the write's own statement, unchanged. A batch
 * statement commits or fails whole; when it fails, nothing of it was written and each write is
 * sent alone, so each caller gets exactly what writing alone gives. A write the statement left out
 * on its own (its guard failed, ADR 0094) is sent alone after it, the others kept.
 */
import { settle, type Letter } from './mailbox.ts';

/** A write the batch statement left out on its own (ADR 0094): it is then sent alone, which gives its answer. */
export const SEND_ALONE: unique symbol = Symbol('send alone');

export interface TurnWrites<T, R> {
  /** Writes per statement at most; 1 writes each alone, as it comes. */
  max: number;
  /** The batch `item` may join, null if it is written alone. */
  groupOf(item: T): string | null;
  /**
   * Items that must not share a statement (one actor's row updated twice in a statement is
   * updated once): an item whose `distinct` is queued already in its group is written alone.
   */
  distinct?(item: T): string;
  /** One write alone: its own statement. */
  alone(item: T): Promise<R>;
  /**
   * Several writes of one group in one statement: each one's result, in order; throws when
   * nothing was written. `SEND_ALONE` for a write the statement left out that must be sent
   * alone to get its answer (a companion's guard that failed for it alone, ADR 0094).
   */
  together(items: T[]): Promise<Array<R | typeof SEND_ALONE>>;
}

interface Group<T, R> {
  letters: Array<Letter<T, R>>;
  keys: Set<string>;
}

export class TurnBatcher<T, R> {
  private queued = new Map<string, Group<T, R>>();
  private scheduled = false;

  constructor(private readonly w: TurnWrites<T, R>) {}

  /** Writes `item`, with others of its shape if some come in the same turn. */
  write(item: T): Promise<R> {
    const key = this.w.max > 1 ? this.w.groupOf(item) : null;
    if (key === null) return this.w.alone(item);
    let group = this.queued.get(key);
    const id = this.w.distinct?.(item);
    if (id !== undefined && group?.keys.has(id)) return this.w.alone(item);
    return new Promise((resolve, reject) => {
      if (!group) this.queued.set(key, (group = { letters: [], keys: new Set() }));
      group.letters.push({ item, resolve, reject });
      if (id !== undefined) group.keys.add(id);
      if (this.scheduled) return;
      this.scheduled = true;
      // After the poll phase: every request read in it has submitted its write by then.
      setImmediate(() => this.flush());
    });
  }

  private flush(): void {
    this.scheduled = false;
    const groups = this.queued;
    this.queued = new Map();
    const max = this.w.max;
    for (const { letters } of groups.values()) {
      for (let i = 0; i < letters.length; i += max) void this.writeTogether(letters.slice(i, i + max));
    }
  }

  private async writeTogether(letters: Array<Letter<T, R>>): Promise<void> {
    if (letters.length === 1) return settle(letters[0]!, this.w.alone(letters[0]!.item));
    let results: Array<R | typeof SEND_ALONE>;
    try {
      results = await this.w.together(letters.map((l) => l.item));
    } catch {
      // Nothing of the batch was written: each alone, as if it had come alone.
      await Promise.all(letters.map((l) => settle(l, this.w.alone(l.item))));
      return;
    }
    const again: Array<Letter<T, R>> = [];
    for (const [i, l] of letters.entries()) {
      const r = results[i]!;
      if (r === SEND_ALONE) again.push(l);
      else l.resolve(r);
    }
    // Left out of the statement, nothing of it written: alone, its own statement answers.
    await Promise.all(again.map((l) => settle(l, this.w.alone(l.item))));
  }
}
