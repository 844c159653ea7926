/**
 * One refund's status, live: `follow(id)` opens `/dashboard/api/refunds/{id}/events` (the
 * server's snapshot feed; the browser does not poll) and each `refund` event replaces the
 * view. Following another refund closes the last stream; `hostDisconnected` closes it too.
 */
import type { ReactiveController, ReactiveControllerHost } from 'lit';
import { liveSource } from './live-source.ts';

export class RefundController<V> implements ReactiveController {
  view: V | null = null;
  live = false;
  private source: EventSource | undefined;
  private id = '';

  constructor(private readonly host: ReactiveControllerHost) {
    host.addController(this);
  }

  /** Shows `view` now and keeps it current. */
  follow(id: string, view: V): void {
    this.view = view;
    if (id !== this.id || !this.source) {
      this.close();
      this.id = id;
      this.open();
    }
    this.host.requestUpdate();
  }

  hostConnected(): void {
    if (this.id) this.open();
  }

  hostDisconnected(): void {
    this.close();
  }

  private close(): void {
    this.source?.close();
    this.source = undefined;
    this.live = false;
  }

  private open(): void {
    if (this.source) return;
    const s = liveSource(`/dashboard/api/refunds/${encodeURIComponent(this.id)}/events`, this.host, (live) => (this.live = live));
    this.source = s;
    s.addEventListener('refund', (e: MessageEvent<string>) => {
      this.view = JSON.parse(e.data) as V;
      this.host.requestUpdate();
    });
  }
}
