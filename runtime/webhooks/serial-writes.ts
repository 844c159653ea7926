/**
 * Writes queued items in batches, one batch at a time: items queued in the same turn of the
 * event loop share a batch, and items queued while a batch is being written leave together
 * with the next. A push resolves once its batch is written, or rejects with the batch's error.
 */
export class SerialWrites<T> {
  private queue: Array<{ item: T; resolve: () => void; reject: (e: unknown) => void }> = [];
  private scheduled = false;
  private writing = false;

  constructor(
    private readonly write: (items: T[]) => Promise<unknown>,
    private readonly maxBatch: number,
  ) {}

  push(item: T): Promise<void> {
    return new Promise((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      if (this.scheduled || this.writing) return;
      this.scheduled = true;
      setImmediate(() => {
        this.scheduled = false;
        void this.flush();
      });
    });
  }

  /** True while items wait or a batch is being written. */
  get busy(): boolean {
    return this.writing || this.queue.length > 0;
  }

  private async flush(): Promise<void> {
    if (this.writing) return;
    this.writing = true;
    try {
      while (this.queue.length > 0) {
        const batch = this.queue.splice(0, this.maxBatch);
        try {
          await this.write(batch.map((b) => b.item));
          for (const b of batch) b.resolve();
        } catch (err) {
          for (const b of batch) b.reject(err);
        }
      }
    } finally {
      this.writing = false;
    }
  }
}
