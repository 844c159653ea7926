/**
 * A payment's live timeline: the entries the page read, then each new journal entry from
 * `/dashboard/api/payments/{id}/events` (the server's snapshot feed; the browser does not
 * poll). Opens the stream in `hostConnected`, closes it in `hostDisconnected`.
 */
import type { ReactiveController, ReactiveControllerHost } from 'lit';
import { liveSource } from './live-source.ts';

export interface TimelineEntry {
  seq: number;
  type: string;
  state_before: string | null;
  state_after: string;
  at: string;
}

export class TimelineController<P> implements ReactiveController {
  entries: TimelineEntry[] = [];
  payment: P | null = null;
  live = false;
  private source: EventSource | undefined;
  private version = 0;

  constructor(
    private readonly host: ReactiveControllerHost,
    private readonly id: () => string,
  ) {
    host.addController(this);
  }

  /** The page's first read; the stream resumes after its version. */
  seed(payment: P, version: number, entries: TimelineEntry[]): void {
    this.payment = payment;
    this.entries = entries;
    this.version = version;
    this.open();
    this.host.requestUpdate();
  }

  hostConnected(): void {
    if (this.version > 0) this.open();
  }

  hostDisconnected(): void {
    this.source?.close();
    this.source = undefined;
    this.live = false;
  }

  private open(): void {
    if (this.source) return;
    const s = liveSource(`/dashboard/api/payments/${encodeURIComponent(this.id())}/events?last_event_id=${this.version}`, this.host, (live) => (this.live = live));
    this.source = s;
    s.addEventListener('entry', (e: MessageEvent<string>) => {
      const { entry, payment } = JSON.parse(e.data) as { entry: TimelineEntry; payment: P };
      if (this.entries.some((x) => x.seq === entry.seq)) return;
      this.entries = [...this.entries, entry];
      this.payment = payment;
      this.version = Math.max(this.version, entry.seq);
      this.host.requestUpdate();
    });
  }
}
