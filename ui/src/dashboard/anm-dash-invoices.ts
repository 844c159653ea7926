/**
 * `<anm-dash-invoices>`: invoices of the mode (DESIGN §7). Create a draft (up to five line
 * items here; the API takes a hundred), finalize it to give it a number and its page, void
 * it or mark it uncollectible; the list shows each one's status, overdue flag and page, and
 * follows the invoices live (a payment turns its invoice PAID while the page is open).
 * The server computes totals and statuses; this element only sends commands and shows them.
 */
import { LitElement, html, nothing } from 'lit';
import { api, field, when } from './api.ts';
import { InvoiceFeedController } from './invoice-feed-controller.ts';
import { dashStyles } from './styles.ts';

interface Invoice {
  id: string;
  status: string;
  overdue: boolean;
  number: string | null;
  customer_name: string | null;
  customer_email: string | null;
  currency: string;
  total: string;
  due_at: string | null;
  hosted_url: string | null;
  payment_intent: string | null;
  created_at: string;
  version: number;
}

const STATUSES = ['DRAFT', 'OPEN', 'PAID', 'VOID', 'UNCOLLECTIBLE'];
const ROWS = [0, 1, 2, 3, 4];

export class AnmDashInvoices extends LitElement {
  static override properties = { mode: { type: String } };
  static override styles = dashStyles;

  declare mode: string;
  private status = '';
  private readonly list = new InvoiceFeedController<Invoice>(
    this,
    () => api<{ data: Invoice[] }>('invoices', { query: { limit: '100', ...(this.status ? { status: this.status } : {}) } }),
    (inv) => !this.status || inv.status === this.status,
  );

  constructor() {
    super();
    this.mode = 'test';
  }

  private create(e: SubmitEvent): void {
    e.preventDefault();
    const form = e.target as HTMLFormElement;
    const f = (k: string) => field(form, k).trim();
    const line_items = ROWS.map((i) => ({ description: f(`d${i}`), quantity: Number(f(`q${i}`) || '1'), unit_price: f(`p${i}`) })).filter((l) => l.description || l.unit_price);
    const opt = (k: string) => (f(k) ? { [k]: f(k) } : {});
    const body = { line_items, currency: f('currency') || 'ANM', ...opt('customer_name'), ...opt('customer_email'), ...opt('memo'), ...opt('due_at') };
    const finalize = (form.elements.namedItem('finalize') as HTMLInputElement | null)?.checked ?? false;
    void this.list.act(async () => {
      const made = await api<Invoice>('invoices', { body });
      if (finalize) await api(`invoices/${encodeURIComponent(made.id)}/finalize`, { method: 'POST' });
      form.reset();
    });
  }

  private command(inv: Invoice, path: 'finalize' | 'void' | 'mark-uncollectible'): void {
    if (path !== 'finalize' && !confirm(`${path === 'void' ? 'Void' : 'Mark uncollectible'} ${inv.number ?? 'this draft'}? It can no longer be paid.`)) return;
    void this.list.act(() => api(`invoices/${encodeURIComponent(inv.id)}/${path}`, { method: 'POST' }));
  }

  private filter(e: Event): void {
    this.status = (e.target as HTMLSelectElement).value;
    void this.list.reload();
  }

  private actions(inv: Invoice) {
    return html`${inv.status === 'DRAFT' ? html`<button class="primary" type="button" @click=${() => this.command(inv, 'finalize')}>Finalize</button>` : nothing}
    ${inv.status === 'DRAFT' || inv.status === 'OPEN' ? html`<button class="danger" type="button" @click=${() => this.command(inv, 'void')}>Void</button>` : nothing}
    ${inv.status === 'OPEN' ? html`<button type="button" @click=${() => this.command(inv, 'mark-uncollectible')}>Uncollectible</button>` : nothing}`;
  }

  override render() {
    const rows = this.list.rows;
    return html`
      <h1>Invoices (${this.mode})</h1>
      ${this.list.error ? html`<p class="error" role="alert">${this.list.error}</p>` : nothing}
      <section aria-labelledby="new">
        <h2 id="new">New invoice</h2>
        <form @submit=${(e: SubmitEvent) => this.create(e)}>
          <div class="row">
            <div><label for="customer_name">Customer</label><input id="customer_name" name="customer_name" maxlength="200" /></div>
            <div><label for="customer_email">Email</label><input id="customer_email" name="customer_email" type="email" /></div>
            <div><label for="due_at">Due date</label><input id="due_at" name="due_at" type="date" /></div>
            <div><label for="currency">Currency</label><input id="currency" name="currency" value="ANM" size="4" maxlength="3" /></div>
          </div>
          ${ROWS.map(
            (i) => html`<div class="row">
              <div><label for="d${i}">Item ${i + 1}</label><input id="d${i}" name="d${i}" maxlength="500" ?required=${i === 0} /></div>
              <div><label for="q${i}">Qty</label><input id="q${i}" name="q${i}" type="number" min="1" step="1" value="1" size="4" /></div>
              <div><label for="p${i}">Unit price</label><input id="p${i}" name="p${i}" inputmode="decimal" ?required=${i === 0} size="10" /></div>
            </div>`,
          )}
          <div class="row">
            <div><label for="memo">Memo</label><input id="memo" name="memo" maxlength="1000" /></div>
            <label><input type="checkbox" name="finalize" checked /> Finalize now (number and page)</label>
            <button class="primary" type="submit">Create invoice</button>
          </div>
        </form>
      </section>
      <section aria-labelledby="list">
        <h2 id="list">Invoices ${this.list.live ? html`<span class="muted" data-testid="live">(live)</span>` : nothing}</h2>
        <label for="status">Status</label>
        <select id="status" @change=${(e: Event) => this.filter(e)}>
          <option value="">Any</option>
          ${STATUSES.map((s) => html`<option value=${s}>${s}</option>`)}
        </select>
        ${rows === null
          ? html`<p aria-busy="true">Loading…</p>`
          : rows.length === 0
            ? html`<p>No invoices in this mode yet.</p>`
            : html`<div class="table">
                <table>
                  <thead>
                    <tr><th scope="col">Number</th><th scope="col">Customer</th><th scope="col">Total</th><th scope="col">Status</th><th scope="col">Due</th><th scope="col">Page</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr>
                  </thead>
                  <tbody>
                    ${rows.map(
                      (inv) => html`<tr data-invoice=${inv.id}>
                        <td>${inv.number ?? html`<em>draft</em>`}</td>
                        <td>${inv.customer_name ?? inv.customer_email ?? '—'}</td>
                        <td>${inv.total} ${inv.currency}</td>
                        <td class="status">${inv.status}${inv.overdue ? ' · overdue' : ''}</td>
                        <td>${inv.due_at ? when(inv.due_at) : '—'}</td>
                        <td>${inv.hosted_url ? html`<a href=${inv.hosted_url} target="_blank" rel="noopener">Open</a>` : '—'}</td>
                        <td>${this.actions(inv)}</td>
                      </tr>`,
                    )}
                  </tbody>
                </table>
              </div>`}
      </section>
    `;
  }
}

customElements.define('anm-dash-invoices', AnmDashInvoices);

declare global {
  interface HTMLElementTagNameMap {
    'anm-dash-invoices': AnmDashInvoices;
  }
}
