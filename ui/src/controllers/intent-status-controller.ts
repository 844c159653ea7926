/**
 * Server state of the checkout: the intent's status view, kept live by the page's
 * Server-Sent Events stream (`/c/{id}/events`, docs/checkout.md). Subscribes in
 * `hostConnected`, closes the stream in `hostDisconnected`; the browser's EventSource resumes
 * with `Last-Event-ID` after a network error, and the server's `end` event closes it for good.
 */
import type { ReactiveController, ReactiveControllerHost } from 'lit';
import type { CheckoutStatusView } from '../types.ts';

export type Connection = 'connecting' | 'live' | 'reconnecting' | 'closed';

export class IntentStatusController implements ReactiveController {
  view: CheckoutStatusView | undefined;
  connection: Connection = 'connecting';
  private url: string | undefined;
  private es: EventSource | undefined;
  private connected = false;

  constructor(
    private readonly host: ReactiveControllerHost,
    private readonly onView: (view: CheckoutStatusView) => void = () => undefined,
  ) {
    host.addController(this);
  }

  /** Starts following `url` from the view the page was rendered with. */
  follow(url: string, initial: CheckoutStatusView): void {
    if (this.url === url) return;
    this.close();
    this.url = url;
    this.view = initial;
    this.onView(initial);
    if (this.connected) this.open();
  }

  hostConnected(): void {
    this.connected = true;
    if (this.url) this.open();
  }

  hostDisconnected(): void {
    this.connected = false;
    this.close();
  }

  private open(): void {
    if (this.es || !this.url) return;
    if (this.view?.final) {
      this.connection = 'closed';
      return;
    }
    const es = new EventSource(this.url);
    this.es = es;
    this.connection = 'connecting';
    es.addEventListener('open', () => this.setConnection('live'));
    es.addEventListener('status', (e) => {
      const view = JSON.parse((e as MessageEvent<string>).data) as CheckoutStatusView;
      // Versions only grow; a resend of the same version may still carry news (final).
      if (this.view && view.version < this.view.version) return;
      this.view = view;
      this.onView(view);
      this.host.requestUpdate();
    });
    es.addEventListener('end', () => {
      this.close();
      this.setConnection('closed');
    });
    es.addEventListener('error', () => {
      if (this.es !== es) return;
      this.setConnection(es.readyState === EventSource.CLOSED ? 'closed' : 'reconnecting');
      if (es.readyState === EventSource.CLOSED) this.es = undefined;
    });
  }

  private close(): void {
    this.es?.close();
    this.es = undefined;
  }

  private setConnection(c: Connection): void {
    if (this.connection === c) return;
    this.connection = c;
    this.host.requestUpdate();
  }
}
