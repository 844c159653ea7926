/**
 * Adaptive batching of one kind of statement (group commit): an item is sent at once while
 * fewer than `maxInFlight` batches are in flight; otherwise it waits and leaves with the items
 * that queued up meanwhile, in one statement. Alone, a request costs one round trip as
 * before; under load, one round trip serves many requests.
 */
interface Waiting<I, O> {
  item: I;
  resolve: (o: O) => void;
  reject: (err: unknown) => void;
}

export interface BatcherOptions {
  maxInFlight?: number;
  maxBatch?: number;
}

export class Batcher<I, O> {
  private queue: Array<Waiting<I, O>> = [];
  private inFlight = 0;
  private readonly maxInFlight: number;
  private readonly maxBatch: number;

  /** `run` answers the items in order (one output per input). */
  constructor(
    private readonly run: (items: I[]) => Promise<O[]>,
    opts: BatcherOptions = {},
  ) {
    this.maxInFlight = opts.maxInFlight ?? 4;
    this.maxBatch = opts.maxBatch ?? 256;
  }

  push(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      this.flush();
    });
  }

  private flush(): void {
    while (this.inFlight < this.maxInFlight && this.queue.length > 0) {
      const batch = this.queue.splice(0, this.maxBatch);
      this.inFlight++;
      const items = batch.map((w) => w.item);
      void Promise.resolve()
        .then(() => this.run(items))
        .then(
          (results) => batch.forEach((w, i) => w.resolve(results[i]!)),
          (err: unknown) => batch.forEach((w) => w.reject(err)),
        )
        .finally(() => {
          this.inFlight--;
          this.flush();
        });
    }
  }
}
