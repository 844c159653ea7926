/**
 * Writes of one shape submitted in the same event-loop turn, sent in one statement (ADR 0089
 * for creates, ADR 0090 for the optimistic path's updates): the requests read in one poll
 * phase share one round trip, one backend wake-up, one executor start and one commit instead
 * of paying one each. A batch of one is the write's own statement, unchanged. A batch
 * statement commits or fails whole; when it fails, nothing of it was written and each write is
 * sent alone, so each caller gets exactly what writing alone gives. A write the statement left out
 * on its own (its guard failed, ADR 0094) is sent alone after it, the others kept. With
 * `inFlight`, a shape's writes that arrive while that many of its statements are out wait for
 * one to answer, then go together (ADR 0106).
 */
import { settle, type Letter } from './mailbox.ts';

/** A write the batch statement left out on its own (ADR 0094): it is then sent alone, which gives its answer. */
export const SEND_ALONE: unique symbol = Symbol('send alone');

export interface TurnWrites<T, R> {
  /** Writes per statement at most; 1 writes each alone, as it comes. */
  max: number;
  /**
   * Statements of one group in flight at most (unbounded when absent): what arrives while
   * they are out waits and goes in the next statement, so the batches grow with the load.
   */
  inFlight?: number;
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

/**
 * Statements of one shape in flight at most, for the engine's and the purchase claims' batches
 * (ADR 0106): under load the writes that arrive while two are out wait for one of them and go
 * together, so the batches grow with the load and PostgreSQL runs fewer, larger statements.
 */
export const STATEMENTS_IN_FLIGHT = 2;

export class TurnBatcher<T, R> {
  private queued = new Map<string, Group<T, R>>();
  private readonly running = new Map<string, number>();
  private scheduled = false;

  constructor(private readonly w: TurnWrites<T, R>) {
    if (w.inFlight !== undefined && !(w.inFlight >= 1)) throw new RangeError('inFlight must be at least 1');
  }

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
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    // After the poll phase: every request read in it has submitted its write by then.
    setImmediate(() => this.flush());
  }

  private flush(): void {
    this.scheduled = false;
    const cap = this.w.inFlight ?? Infinity;
    const max = this.w.max;
    for (const [key, group] of this.queued) {
      let running = this.running.get(key) ?? 0;
      while (group.letters.length > 0 && running < cap) {
        running++;
        void this.writeTogether(key, group.letters.splice(0, max));
      }
      this.running.set(key, running);
      if (group.letters.length === 0) this.queued.delete(key);
      else if (this.w.distinct) group.keys = new Set(group.letters.map((l) => this.w.distinct!(l.item)));
    }
  }

  /** One statement of `key`'s group has answered: what waited for it goes next. */
  private done(key: string): void {
    const left = (this.running.get(key) ?? 1) - 1;
    if (left > 0) this.running.set(key, left);
    else this.running.delete(key);
    if (this.queued.has(key)) this.schedule();
  }

  /** One statement of `key`'s group; its place in flight is given back as soon as it answers. */
  private async writeTogether(key: string, letters: Array<Letter<T, R>>): Promise<void> {
    if (letters.length === 1) {
      const letter = letters[0]!;
      return settle(letter, attempt(() => this.w.alone(letter.item)).finally(() => this.done(key)));
    }
    let results: Array<R | typeof SEND_ALONE>;
    try {
      results = await attempt(() => this.w.together(letters.map((l) => l.item)));
    } catch {
      this.done(key);
      // Nothing of the batch was written: each alone, as if it had come alone.
      await Promise.all(letters.map((l) => settle(l, this.w.alone(l.item))));
      return;
    }
    this.done(key);
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

/** `fn`'s promise, or a rejected one if it throws before returning one: a statement's place is always given back. */
function attempt<V>(fn: () => Promise<V>): Promise<V> {
  try {
    return fn();
  } catch (err) {
    return Promise.reject(err instanceof Error ? err : new Error(String(err)));
  }
}
