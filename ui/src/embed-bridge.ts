/**
 * The embedded page's side of the widget protocol (docs/widget.md). It talks only to its
 * parent window, only after that parent said `hello` from one of the merchant's allowed
 * origins (a loopback `*` port entry matches any port, in test mode only), and then only to
 * that exact concrete origin (never `*`).
 */
import { anyOriginMatches } from '../../machines/kit/origin-pattern.ts';
import { CHECKOUT_SOURCE, WIDGET_SOURCE, type CheckoutStatusView, type CheckoutToWidget } from './types.ts';

type Outgoing = { type: 'ready'; status: CheckoutStatusView } | { type: 'status'; status: CheckoutStatusView } | { type: 'close' };

export class EmbedBridge {
  private parentOrigin: string | null = null;
  private latest: CheckoutStatusView;

  constructor(
    private readonly intentId: string,
    private readonly allowedOrigins: readonly string[],
    initial: CheckoutStatusView,
    /** Whether a loopback `*` port entry may match: test mode only. */
    private readonly wildcards: boolean,
    private readonly win: Window = window,
  ) {
    this.latest = initial;
    this.win.addEventListener('message', this.onMessage);
  }

  dispose(): void {
    this.win.removeEventListener('message', this.onMessage);
  }

  status(view: CheckoutStatusView): void {
    this.latest = view;
    this.send({ type: 'status', status: view });
  }

  close(): void {
    this.send({ type: 'close' });
  }

  private readonly onMessage = (e: MessageEvent<unknown>): void => {
    const parent = this.win.parent;
    if (parent === this.win || e.source !== parent) return;
    if (!anyOriginMatches(this.allowedOrigins, e.origin, { wildcards: this.wildcards })) return;
    const d = e.data as { source?: unknown; v?: unknown; type?: unknown; intent?: unknown } | null;
    if (!d || typeof d !== 'object' || d.source !== WIDGET_SOURCE || d.v !== 1 || d.type !== 'hello' || d.intent !== this.intentId) return;
    // The first allowed origin to say hello is the one we talk to; a later one is ignored.
    if (this.parentOrigin !== null && this.parentOrigin !== e.origin) return;
    this.parentOrigin = e.origin;
    this.send({ type: 'ready', status: this.latest });
  };

  private send(msg: Outgoing): void {
    if (this.parentOrigin === null) return;
    const out = { source: CHECKOUT_SOURCE, v: 1, intent: this.intentId, ...msg } as CheckoutToWidget;
    this.win.parent.postMessage(out, this.parentOrigin);
  }
}
