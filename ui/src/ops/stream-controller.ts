/**
 * Follows one of the console's event streams while its element is connected: opens the
 * EventSource in `hostConnected`, closes it in `hostDisconnected`, and hands each named event's
 * JSON to the element. The browser reconnects by itself after a network error.
 */
import type { ReactiveController, ReactiveControllerHost } from 'lit';

export type StreamHandlers = Record<string, (data: unknown) => void>;

export class StreamController implements ReactiveController {
  live = false;
  private es: EventSource | undefined;

  constructor(
    private readonly host: ReactiveControllerHost,
    private readonly url: () => string | null,
    private readonly handlers: StreamHandlers,
  ) {
    host.addController(this);
  }

  hostConnected(): void {
    const url = this.url();
    if (!url || this.es) return;
    const es = new EventSource(url);
    this.es = es;
    es.addEventListener('open', () => this.set(true));
    es.addEventListener('error', () => this.set(false));
    for (const [name, fn] of Object.entries(this.handlers)) es.addEventListener(name, (e) => fn(JSON.parse((e as MessageEvent<string>).data)));
  }

  hostDisconnected(): void {
    this.es?.close();
    this.es = undefined;
    this.set(false);
  }

  private set(live: boolean): void {
    if (this.live === live) return;
    this.live = live;
    this.host.requestUpdate();
  }
}
