/**
 * What the server embeds in the checkout page (`<script type="application/json"
 * id="anm-checkout-data">`) and streams on `/c/{id}/events`. The shapes are rendered on the
 * server from the snapshot (machines/payment-intent/checkout-view.ts); the browser only shows them.
 */
import type { CheckoutPageView, CheckoutStatusView } from '../../machines/payment-intent/checkout-view.ts';

export type { CheckoutIntentView, CheckoutPageView, CheckoutStatusView } from '../../machines/payment-intent/checkout-view.ts';

export interface CheckoutPageData extends CheckoutPageView {
  /** Same-origin path of the event stream, with the version the page was rendered at. */
  events_url: string;
  /** Present on `?embed=1`: the origins the merchant allows to frame the page (and to talk to it). */
  embed: { origins: string[] } | null;
}

/** Detail of the `anm-status-change` event `anm-checkout` fires on each new status view. */
export type StatusChangeDetail = CheckoutStatusView;

/** `postMessage` protocol between widget.js and the embedded page (docs/widget.md). */
export const WIDGET_SOURCE = 'anm-pay-widget';
export const CHECKOUT_SOURCE = 'anm-pay-checkout';
export const PROTOCOL_VERSION = 1;

export type WidgetToCheckout = { source: typeof WIDGET_SOURCE; v: 1; type: 'hello'; intent: string };

export type CheckoutToWidget =
  | { source: typeof CHECKOUT_SOURCE; v: 1; type: 'ready'; intent: string; status: CheckoutStatusView }
  | { source: typeof CHECKOUT_SOURCE; v: 1; type: 'status'; intent: string; status: CheckoutStatusView }
  | { source: typeof CHECKOUT_SOURCE; v: 1; type: 'close'; intent: string };
