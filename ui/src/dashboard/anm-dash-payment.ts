/** `<anm-dash-payment>`: one payment, its details and its live timeline from the actor journal. */
import { LitElement, html, nothing } from 'lit';
import type { PaymentIntentResource } from '../../../machines/payment-intent/view.ts';
import { api, errorText, when } from './api.ts';
import { dashStyles } from './styles.ts';
import { TimelineController, type TimelineEntry } from './timeline-controller.ts';
import './anm-dash-refunds.ts';

type Payment = PaymentIntentResource;

export class AnmDashPayment extends LitElement {
  static override properties = { paymentId: { type: String }, error: { state: true } };
  static override styles = dashStyles;

  declare paymentId: string;
  declare error: string;
  private refunds: string[] = [];
  private readonly timeline = new TimelineController<Payment>(this, () => this.paymentId);

  constructor() {
    super();
    this.paymentId = '';
    this.error = '';
  }

  override connectedCallback(): void {
    super.connectedCallback();
    api<{ payment: Payment; version: number; timeline: TimelineEntry[]; refunds: Array<{ id: string }> }>(`payments/${encodeURIComponent(this.paymentId)}`).then(
      (r) => {
        this.refunds = r.refunds.map((x) => x.id);
        this.timeline.seed(r.payment, r.version, r.timeline);
      },
      (err: unknown) => (this.error = errorText(err)),
    );
  }

  override render() {
    if (this.error) return html`<h1>Payment</h1><p class="error" role="alert">${this.error}</p><p><a href="/dashboard/payments">All payments</a></p>`;
    const p = this.timeline.payment;
    if (!p) return html`<p aria-busy="true">Loading…</p>`;
    return html`
      <h1>Payment <code>${p.id}</code></h1>
      <section aria-labelledby="details">
        <h2 id="details">Details</h2>
        <dl>
          <dt>Status</dt>
          <dd class="status" data-testid="status" aria-live="polite">${p.status}</dd>
          <dt>Amount</dt>
          <dd>${p.anm_amount_formatted}</dd>
          <dt>Description</dt>
          <dd data-testid="description">${p.description ?? '—'}</dd>
          <dt>Order id</dt>
          <dd>${p.merchant_order_id ?? '—'}</dd>
          <dt>Confirmations</dt>
          <dd>${p.confirmations} of ${p.required_confirmations}</dd>
          <dt>Transaction</dt>
          <dd><code>${p.transaction_hash ?? '—'}</code></dd>
          <dt>Pay to</dt>
          <dd><code>${p.payment_address}</code></dd>
          <dt>Reference</dt>
          <dd><code>${p.payment_reference}</code></dd>
          <dt>Checkout</dt>
          <dd><a href=${p.checkout_url}>${p.checkout_url}</a></dd>
          <dt>Created</dt>
          <dd>${when(p.created_at)}</dd>
          <dt>Completed</dt>
          <dd>${when(p.completed_at)}</dd>
        </dl>
      </section>
      <section aria-labelledby="tl">
        <h2 id="tl">Timeline ${this.timeline.live ? html`<span class="muted">(live)</span>` : nothing}</h2>
        <ol data-testid="timeline">
          ${this.timeline.entries.map(
            (e) => html`<li><strong>${e.state_after}</strong> <span class="muted">after <code>${e.type}</code> · #${e.seq} · ${when(e.at)}</span></li>`,
          )}
        </ol>
      </section>
      ${p.mode === 'live'
        ? html`<anm-dash-refunds .paymentId=${p.id} .refundable=${p.status === 'PAID' || p.status === 'PARTIALLY_REFUNDED'} .ids=${this.refunds}></anm-dash-refunds>`
        : html`<p class="muted">Refunds move real ANM: they are made in live mode only.</p>`}
      <p><a href="/dashboard/payments">All payments</a></p>
    `;
  }
}

customElements.define('anm-dash-payment', AnmDashPayment);

declare global {
  interface HTMLElementTagNameMap {
    'anm-dash-payment': AnmDashPayment;
  }
}
