/**
 * One queue per actor in a process: events for an actor are taken in the order they were
 * posted, one step at a time, and concurrently across actors. While an actor's step is in
 * flight, what arrives for it waits; the next step takes what waited together (as many as
 * `gather` allows from the head), so a hot actor writes once per round trip, not once per event.
 */
export interface Letter<T, R> {
  item: T;
  resolve: (r: R) => void;
  reject: (err: unknown) => void;
}

/** Settles `letter` with what `work` ends in. */
export function settle<R>(letter: Letter<unknown, R>, work: Promise<R>): Promise<void> {
  return work.then(letter.resolve, letter.reject);
}

export class Mailboxes<T, R> {
  private readonly queues = new Map<string, Array<Letter<T, R>>>();

  /**
   * `gather`: how many letters from the head of a non-empty queue go in the next step (at
   * least one). `deliver` settles every letter it is given and never throws.
   */
  constructor(
    private readonly gather: (queue: ReadonlyArray<Letter<T, R>>) => number,
    private readonly deliver: (letters: Array<Letter<T, R>>) => Promise<void>,
  ) {}

  post(key: string, item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      const letter = { item, resolve, reject };
      const queue = this.queues.get(key);
      if (queue) {
        queue.push(letter);
        return;
      }
      const fresh = [letter];
      this.queues.set(key, fresh);
      void this.drain(key, fresh);
    });
  }

  private async drain(key: string, queue: Array<Letter<T, R>>): Promise<void> {
    while (queue.length > 0) {
      const n = Math.max(1, Math.min(queue.length, this.gather(queue)));
      await this.deliver(queue.splice(0, n));
    }
    this.queues.delete(key);
  }

  /** Actors with a step in flight or letters waiting. */
  get size(): number {
    return this.queues.size;
  }
}
