/** `<anm-dash-payments>`: payments of the mode with filters (status, dates, order id) and cursor pages. */
import { LitElement, html, nothing } from 'lit';
import { api, field } from './api.ts';
import { ResourceController } from './resource-controller.ts';
import './anm-dash-payment-table.ts';
import type { PaymentSummary } from './anm-dash-payment-table.ts';
import { dashStyles } from './styles.ts';

const STATUSES = ['CREATED', 'AWAITING_PAYMENT', 'PAYMENT_DETECTED', 'CONFIRMING', 'PAID', 'UNDERPAID', 'OVERPAID', 'EXPIRED', 'FAILED', 'PARTIALLY_REFUNDED', 'REFUNDED'];

type Filter = Record<'status' | 'from' | 'to' | 'order_id', string>;

export class AnmDashPayments extends LitElement {
  static override styles = dashStyles;

  private filter: Filter = { status: '', from: '', to: '', order_id: '' };
  /** Cursors of the pages before this one, to go back. */
  private readonly back: string[] = [];
  private cursor = '';
  private readonly page = new ResourceController(this, () =>
    api<{ data: PaymentSummary[]; has_more: boolean }>('payments', { query: { ...this.filter, starting_after: this.cursor || undefined } }),
  );

  private load(): void {
    void this.page.reload();
  }

  private apply(e: SubmitEvent): void {
    e.preventDefault();
    const f = (k: string) => field(e.target, k);
    this.filter = { status: f('status'), from: f('from'), to: f('to'), order_id: f('order_id').trim() };
    this.back.length = 0;
    this.cursor = '';
    this.load();
  }

  private next(): void {
    const last = this.page.value?.data.at(-1);
    if (!last) return;
    this.back.push(this.cursor);
    this.cursor = last.id;
    this.load();
  }

  private prev(): void {
    this.cursor = this.back.pop() ?? '';
    this.load();
  }

  override render() {
    const rows = this.page.value?.data ?? null;
    return html`
      <h1>Payments</h1>
      <form class="row" aria-label="Filter payments" @submit=${(e: SubmitEvent) => this.apply(e)}>
        <div>
          <label for="status">Status</label>
          <select id="status" name="status">
            <option value="">Any</option>
            ${STATUSES.map((s) => html`<option value=${s}>${s}</option>`)}
          </select>
        </div>
        <div><label for="from">Created from</label><input id="from" name="from" type="date" /></div>
        <div><label for="to">Created to</label><input id="to" name="to" type="date" /></div>
        <div><label for="order_id">Order id</label><input id="order_id" name="order_id" maxlength="120" /></div>
        <button type="submit">Filter</button>
      </form>
      ${this.page.error ? html`<p class="error" role="alert">${this.page.error}</p>` : nothing}
      <section>
        ${rows === null
          ? html`<p aria-busy="true">Loading…</p>`
          : rows.length === 0
            ? html`<p class="muted">No payments match.</p>`
            : html`<anm-dash-payment-table .rows=${rows}></anm-dash-payment-table>`}
        <p class="row">
          <button type="button" ?disabled=${this.back.length === 0} @click=${() => this.prev()}>Previous page</button>
          <button type="button" ?disabled=${!this.page.value?.has_more} @click=${() => this.next()}>Next page</button>
        </p>
      </section>
    `;
  }
}

customElements.define('anm-dash-payments', AnmDashPayments);

declare global {
  interface HTMLElementTagNameMap {
    'anm-dash-payments': AnmDashPayments;
  }
}
