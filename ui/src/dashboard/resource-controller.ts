/**
 * One JSON read of a page (`/dashboard/api/…`): fetched when the element connects and on
 * `reload()`, with its error as text. The element renders `value` and `error`.
 */
import type { ReactiveController, ReactiveControllerHost } from 'lit';
import { errorText } from './api.ts';

export class ResourceController<T> implements ReactiveController {
  value: T | null = null;
  error = '';

  constructor(
    private readonly host: ReactiveControllerHost,
    private readonly read: () => Promise<T>,
  ) {
    host.addController(this);
  }

  hostConnected(): void {
    void this.reload();
  }

  async reload(): Promise<void> {
    try {
      this.value = await this.read();
      this.error = '';
    } catch (err) {
      this.error = errorText(err);
    }
    this.host.requestUpdate();
  }

  /** Runs a write, then reads again; its error is shown like a read's. */
  act(work: () => Promise<unknown>): Promise<void> {
    return writeThenRead(this, this.host, work);
  }
}

/** A controller's write followed by a read again; a failed write's error is shown like a read's. */
export async function writeThenRead(c: { error: string; reload(): Promise<void> }, host: ReactiveControllerHost, work: () => Promise<unknown>): Promise<void> {
  try {
    await work();
  } catch (err) {
    c.error = errorText(err);
    host.requestUpdate();
    return;
  }
  await c.reload();
}
