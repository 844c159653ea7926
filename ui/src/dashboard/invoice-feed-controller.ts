/**
 * The invoices page's rows, live: the list read (`/dashboard/api/invoices`, each row with its
 * actor version) merged with `/dashboard/api/invoices/events` (every invoice of the mode from
 * the server's snapshot feed; the browser does not poll). Each invoice shows whichever of the
 * two is newer, so a list read that races an update never takes the page back. The list is
 * read each time the stream (re)connects, which covers what passed while it was down, and
 * once anyway when the stream cannot open, so the page still shows its invoices.
 */
import type { ReactiveController, ReactiveControllerHost } from 'lit';
import { errorText } from './api.ts';
import { liveSource } from './live-source.ts';
import { writeThenRead } from './resource-controller.ts';

export interface Versioned {
  id: string;
  status: string;
  version: number;
}

/** The rows to show: the list's, each replaced by a newer streamed one, after invoices the list does not have yet. */
export function mergeRows<V extends Versioned>(listed: readonly V[], streamed: ReadonlyMap<string, V>, keep: (v: V) => boolean): V[] {
  const known = new Set(listed.map((r) => r.id));
  const newer = (r: V) => {
    const s = streamed.get(r.id);
    return s && s.version > r.version ? s : r;
  };
  // Newest first, as the list is: a streamed invoice the list lacks was created since.
  const fresh = [...streamed.values()].filter((s) => !known.has(s.id) && keep(s)).reverse();
  return [...fresh, ...listed.map(newer)];
}

export class InvoiceFeedController<V extends Versioned> implements ReactiveController {
  rows: V[] | null = null;
  error = '';
  live = false;
  private listed: V[] = [];
  private readonly streamed = new Map<string, V>();
  private source: EventSource | undefined;

  constructor(
    private readonly host: ReactiveControllerHost,
    private readonly read: () => Promise<{ data: V[] }>,
    /** Whether a new invoice belongs on the page (the status filter). */
    private readonly keep: (v: V) => boolean,
  ) {
    host.addController(this);
  }

  hostConnected(): void {
    const s = liveSource('/dashboard/api/invoices/events', this.host, (live) => {
      this.live = live;
      // Read once listening (nothing missed in between); without a stream, read all the same.
      if (live || this.rows === null) void this.reload();
    });
    this.source = s;
    s.addEventListener('invoice', (e: MessageEvent<string>) => {
      const m = JSON.parse(e.data) as { invoice: Omit<V, 'version'>; version: number };
      const v = { ...m.invoice, version: m.version } as V;
      const had = this.streamed.get(v.id);
      if (!had || had.version < v.version) this.streamed.set(v.id, v);
      this.show();
    });
  }

  hostDisconnected(): void {
    this.source?.close();
    this.source = undefined;
    this.live = false;
  }

  async reload(): Promise<void> {
    try {
      this.listed = (await this.read()).data;
      this.error = '';
    } catch (err) {
      this.error = errorText(err);
    }
    this.show();
  }

  /** Runs a write, then reads again; its error is shown like a read's. */
  act(work: () => Promise<unknown>): Promise<void> {
    return writeThenRead(this, this.host, work);
  }

  private show(): void {
    this.rows = mergeRows(this.listed, this.streamed, this.keep);
    this.host.requestUpdate();
  }
}
