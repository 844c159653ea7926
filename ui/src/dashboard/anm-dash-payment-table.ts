/** `<anm-dash-payment-table>`: payments as a table; each id links to its page. Text only, never markup. */
import { LitElement, html } from 'lit';
import { when } from './api.ts';
import { dashStyles } from './styles.ts';

export interface PaymentSummary {
  id: string;
  status: string;
  anm_amount_formatted: string;
  merchant_order_id: string | null;
  description: string | null;
  created_at: string;
}

export class AnmDashPaymentTable extends LitElement {
  static override properties = { rows: { attribute: false } };
  static override styles = dashStyles;

  declare rows: PaymentSummary[];

  constructor() {
    super();
    this.rows = [];
  }

  override render() {
    return html`<div class="table">
      <table>
        <thead>
          <tr><th scope="col">Payment</th><th scope="col">Status</th><th scope="col">Amount</th><th scope="col">Order / description</th><th scope="col">Created</th></tr>
        </thead>
        <tbody>
          ${this.rows.map(
            (p) => html`<tr>
              <td><a href="/dashboard/payments/${p.id}"><code>${p.id}</code></a></td>
              <td class="status">${p.status}</td>
              <td>${p.anm_amount_formatted}</td>
              <td>${p.merchant_order_id ?? ''}${p.merchant_order_id && p.description ? html`<br />` : ''}<span class="muted">${p.description ?? ''}</span></td>
              <td>${when(p.created_at)}</td>
            </tr>`,
          )}
        </tbody>
      </table>
    </div>`;
  }
}

customElements.define('anm-dash-payment-table', AnmDashPaymentTable);

declare global {
  interface HTMLElementTagNameMap {
    'anm-dash-payment-table': AnmDashPaymentTable;
  }
}
