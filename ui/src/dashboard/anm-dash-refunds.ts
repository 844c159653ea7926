/**
 * `<anm-dash-refunds>`: refunds of one live payment. Create one (amount optional: the whole
 * remainder), then sign its unsigned transfer from the payout wallet with the command shown,
 * or paste a transaction signed elsewhere and submit it; its status follows the chain live.
 */
import { LitElement, html, nothing } from 'lit';
import '../elements/anm-copy-field.ts';
import { api, errorText, field } from './api.ts';
import { RefundController } from './refund-controller.ts';
import { dashStyles } from './styles.ts';

interface Refund {
  id: string;
  status: string;
  amount_formatted: string;
  reason: string | null;
  unsigned_transfer: Record<string, unknown> | null;
  transaction_hash: string | null;
}
interface RefundView {
  refund: Refund;
  command: string | null;
}

export class AnmDashRefunds extends LitElement {
  static override properties = {
    paymentId: { type: String },
    refundable: { type: Boolean },
    ids: { attribute: false },
    error: { state: true },
  };
  static override styles = dashStyles;

  declare paymentId: string;
  declare refundable: boolean;
  declare ids: string[];
  declare error: string;
  private readonly refund = new RefundController<RefundView>(this);

  constructor() {
    super();
    this.paymentId = '';
    this.refundable = false;
    this.ids = [];
    this.error = '';
  }

  private async run(work: () => Promise<RefundView>): Promise<void> {
    this.error = '';
    try {
      const view = await work();
      this.refund.follow(view.refund.id, view);
    } catch (err) {
      this.error = errorText(err);
    }
  }

  private create(e: SubmitEvent): void {
    e.preventDefault();
    const amount = field(e.target, 'amount').trim();
    const reason = field(e.target, 'reason').trim();
    void this.run(() => api<RefundView>('refunds', { body: { payment_intent: this.paymentId, ...(amount ? { amount } : {}), ...(reason ? { reason } : {}) } }));
  }

  private submit(e: SubmitEvent): void {
    e.preventDefault();
    const hex = field(e.target, 'signed').trim();
    const id = this.refund.view!.refund.id;
    void this.run(() => api<RefundView>(`refunds/${encodeURIComponent(id)}/submit`, { body: { signed_transaction: hex } }));
  }

  private show(id: string): void {
    void this.run(() => api<RefundView>(`refunds/${encodeURIComponent(id)}`));
  }

  override render() {
    const o = this.refund.view;
    return html`<section aria-labelledby="rf">
      <h2 id="rf">Refunds</h2>
      ${this.error ? html`<p class="error" role="alert">${this.error}</p>` : nothing}
      ${this.ids.length
        ? html`<ul>
            ${this.ids.map((id) => html`<li><button type="button" @click=${() => this.show(id)}>Show ${id}</button></li>`)}
          </ul>`
        : nothing}
      ${this.refundable
        ? html`<form class="row" @submit=${(e: SubmitEvent) => this.create(e)}>
            <div><label for="amount">Amount in ANM (empty: all that is left)</label><input id="amount" name="amount" inputmode="decimal" /></div>
            <div><label for="reason">Reason</label><input id="reason" name="reason" maxlength="300" /></div>
            <button type="submit">Create refund</button>
          </form>`
        : nothing}
      ${o
        ? html`<div class="card" data-testid="refund">
            <p>
              Refund <code>${o.refund.id}</code>: <strong data-testid="refund-status" aria-live="polite">${o.refund.status}</strong>, ${o.refund.amount_formatted}
              <span data-testid="refund-live">${this.refund.live ? '(status live)' : '(reconnecting…)'}</span>
            </p>
            ${o.refund.unsigned_transfer
              ? html`<p>The transfer to sign from your payout address:</p>
                  <pre><code>${JSON.stringify(o.refund.unsigned_transfer, null, 2)}</code></pre>
                  ${o.command ? html`<anm-copy-field label="Sign and send it with" field="refund-command" .value=${o.command}></anm-copy-field>` : nothing}
                  <form @submit=${(e: SubmitEvent) => this.submit(e)}>
                    <label for="signed">Or paste a signed transaction (hex)</label>
                    <textarea id="signed" name="signed" rows="3" required></textarea>
                    <p><button type="submit">Submit signed transaction</button></p>
                  </form>`
              : html`<p>Transaction <code>${o.refund.transaction_hash ?? '—'}</code></p>`}
          </div>`
        : nothing}
    </section>`;
  }
}

customElements.define('anm-dash-refunds', AnmDashRefunds);

declare global {
  interface HTMLElementTagNameMap {
    'anm-dash-refunds': AnmDashRefunds;
  }
}
