/**
 * `<anm-pos>`: the till. A keypad for the amount (ANM, or a fiat currency the rate source
 * quotes) or a cart from the product grid (the merchant's fixed-price payment links, limited
 * ones with their units left and greyed out when none is), an optional note, "Charge"; then the checkout's own element shows the QR code and
 * follows the payment live until PAID (a big confirmation and "New sale") or until it ends
 * otherwise. Below, the day's sales and totals. Local state in an @xstate/store (till-store);
 * what a payment is, only the server says.
 */
import { LitElement, css, html, nothing } from 'lit';
import { StoreController } from '../controllers/store-controller.ts';
import '../elements/anm-checkout.ts';
import { tokens } from '../elements/tokens.ts';
import type { CheckoutPageData, StatusChangeDetail } from '../types.ts';
import { ApiError } from '../shared/json-client.ts';
import { api, type PosPageData, type SalesDay } from './api.ts';
import { cartTotal, chargeable, createTill, roomFor, type Product, type TillStore } from './till-store.ts';

const KEYS = ['1', '2', '3', '4', '5', '6', '7', '8', '9', '.', '0', '<'];
const ENDED = new Set(['EXPIRED', 'FAILED']);

/** `AWAITING_PAYMENT` may break after its underscore, and nowhere else. */
const breakable = (status: string) => status.split('_').map((part, i) => (i ? html`_<wbr />${part}` : part));

export class AnmPos extends LitElement {
  static override properties = { data: { attribute: false }, status: { state: true }, day: { state: true }, products: { state: true } };
  static override styles = [
    tokens,
    css`
      /* minmax(0, …): a panel never grows to its widest content, so a long note cannot widen the page. */
      :host { display: grid; grid-template-columns: minmax(0, 1fr); gap: 16px; padding: 16px; max-width: 1100px; margin: 0 auto; box-sizing: border-box; }
      @media (min-width: 900px) { :host { grid-template-columns: minmax(0, 3fr) minmax(0, 2fr); } }
      section { background: var(--anm-bg); border: 1px solid var(--anm-border); border-radius: var(--anm-radius); padding: 16px; min-width: 0; }
      h1, h2 { margin: 0 0 12px; font-size: 1.25rem; }
      .display { display: block; font-size: 2.5rem; font-variant-numeric: tabular-nums; text-align: right; padding: 8px 12px; background: var(--anm-surface); border-radius: 8px; min-height: 3rem; word-break: break-all; }
      .keys { display: grid; grid-template-columns: repeat(3, 1fr); gap: 8px; margin: 12px 0; }
      .keys button { font-size: 1.75rem; min-height: 64px; }
      button { font: inherit; border: 1px solid var(--anm-border); border-radius: 8px; background: var(--anm-surface); color: var(--anm-fg); cursor: pointer; padding: 8px 14px; }
      button.primary { background: var(--anm-accent); color: #fff; border-color: var(--anm-accent); font-size: 1.25rem; width: 100%; min-height: 56px; }
      button:disabled { opacity: 0.55; cursor: not-allowed; }
      .row { display: flex; gap: 8px; align-items: center; flex-wrap: wrap; margin-bottom: 8px; }
      label { font-weight: 600; }
      input, select { font: inherit; padding: 8px; border: 1px solid var(--anm-border); border-radius: 8px; }
      input { flex: 1; min-width: 0; }
      .paid { background: var(--anm-success-bg); color: var(--anm-success); border-radius: var(--anm-radius); padding: 24px; text-align: center; font-size: 2rem; font-weight: 700; }
      .error { color: var(--anm-error); background: var(--anm-error-bg); padding: 8px 10px; border-radius: 8px; }
      .mode { color: var(--anm-warn); background: var(--anm-warn-bg); padding: 4px 8px; border-radius: 6px; font-size: 0.9rem; }
      /* Notes and long amounts wrap anywhere rather than widen the table (a note may be one long word); the scroller is the last resort on a narrow screen. */
      .table-scroll { overflow-x: auto; }
      table { width: 100%; border-collapse: collapse; font-variant-numeric: tabular-nums; font-size: 0.9rem; }
      td, th { text-align: left; padding: 6px 4px; border-bottom: 1px solid var(--anm-border); }
      th { white-space: nowrap; }
      td.amount, td.note { overflow-wrap: anywhere; }
      td.amount { min-width: 5em; }
      td.note { min-width: 8em; }
      th { color: var(--anm-muted); font-weight: 600; }
      .grid { display: grid; grid-template-columns: repeat(auto-fill, minmax(140px, 1fr)); gap: 8px; margin: 8px 0 12px; }
      .grid button { min-height: 64px; text-align: left; }
      .cart { list-style: none; padding: 0; margin: 0 0 12px; }
      .cart li { display: flex; gap: 8px; align-items: center; padding: 4px 0; }
      .cart li span { flex: 1; }
    `,
  ];

  declare data: PosPageData | undefined;
  declare status: string;
  declare day: SalesDay | null;
  declare products: Product[];
  private till: TillStore | undefined;
  private local: StoreController<ReturnType<TillStore['getSnapshot']>> | undefined;

  constructor() {
    super();
    this.status = '';
    this.day = null;
    this.products = [];
  }

  override willUpdate(): void {
    if (this.data && !this.till) {
      this.till = createTill(this.data.currencies[0] ?? 'ANM');
      this.local = new StoreController(this, this.till);
      void this.loadSales();
      void this.loadProducts();
    }
  }

  /** Read again after each sale and refusal: units left move with every till and Pay page. */
  private async loadProducts(): Promise<void> {
    try {
      this.products = (await api<{ data: Product[] }>('products')).data;
    } catch {
      // The grid is a convenience; the keypad works without it.
    }
  }

  private async loadSales(): Promise<void> {
    const midnight = new Date();
    midnight.setHours(0, 0, 0, 0);
    try {
      this.day = await api<SalesDay>('sales', { query: { since: midnight.toISOString() } });
    } catch {
      // The list is a convenience; the till keeps working without it.
    }
  }

  private async charge(): Promise<void> {
    const t = this.till!;
    const c = t.getSnapshot().context;
    t.trigger.charging();
    try {
      const note = c.note.trim() ? { note: c.note.trim() } : {};
      const sale = c.cart.length ? { items: c.cart.map((l) => ({ link: l.product.link, quantity: l.quantity })) } : { amount: c.entry, currency: c.currency };
      const r = await api<{ checkout: CheckoutPageData }>('charge', { body: { sale_id: c.saleId, ...sale, ...note } });
      this.status = r.checkout.status.status;
      t.trigger.charged({ checkout: r.checkout });
      void this.loadSales();
      void this.loadProducts();
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      if (err instanceof ApiError && err.code === 'sold_out') {
        t.trigger.refused({ message });
        void this.loadProducts();
      } else t.trigger.failed({ message });
    }
  }

  private onStatus(e: CustomEvent<StatusChangeDetail>): void {
    const before = this.status;
    this.status = e.detail.status;
    if (before !== this.status && (this.status === 'PAID' || ENDED.has(this.status))) void this.loadSales();
  }

  private newSale(): void {
    this.status = '';
    this.till!.trigger.newSale();
    void this.loadProducts();
  }

  override render() {
    const d = this.data;
    const c = this.local?.value.context;
    if (!d || !c) return nothing;
    return html`<section aria-labelledby="till">
        <div class="row">
          <h1 id="till">Point of sale · ${d.merchant}</h1>
          ${d.mode === 'test' ? html`<span class="mode" data-testid="mode">Test mode</span>` : nothing}
        </div>
        ${c.screen === 'sale' && c.checkout ? this.sale(c.checkout) : this.keypad(d, c.entry, c.currency, c.note, c.screen === 'charging', c.error)}
        ${c.screen === 'keypad' ? this.grid() : nothing}
      </section>
      ${this.sales()}`;
  }

  private keypad(d: PosPageData, entry: string, currency: string, note: string, busy: boolean, error: string) {
    const t = this.till!;
    return html`<div class="row">
        <label for="currency">Currency</label>
        <select id="currency" .value=${currency} @change=${(e: Event) => t.trigger.currency({ currency: (e.target as HTMLSelectElement).value })}>
          ${d.currencies.map((x) => html`<option value=${x} ?selected=${x === currency}>${x}</option>`)}
        </select>
      </div>
      <output class="display" data-testid="display" aria-live="polite" aria-label="Amount">${entry || '0'} ${currency}</output>
      <div class="keys" role="group" aria-label="Keypad">
        ${KEYS.map((k) => html`<button type="button" aria-label=${k === '<' ? 'Delete' : k === '.' ? 'Point' : k} @click=${() => t.trigger.key({ key: k })}>${k === '<' ? '⌫' : k}</button>`)}
      </div>
      <div class="row">
        <label for="note">Note</label>
        <input id="note" maxlength="500" .value=${note} @input=${(e: Event) => t.trigger.note({ note: (e.target as HTMLInputElement).value })} />
        <button type="button" @click=${() => t.trigger.key({ key: 'C' })}>Clear</button>
      </div>
      ${error ? html`<p class="error" role="alert">${error}</p>` : nothing}
      ${this.cart()}
      <button class="primary" type="button" ?disabled=${busy || !(this.local!.value.context.cart.length || chargeable(entry))} @click=${() => void this.charge()}>
        ${busy ? 'Charging…' : 'Charge'}
      </button>`;
  }

  private cart() {
    const lines = this.local!.value.context.cart;
    const total = cartTotal(lines);
    if (!total) return nothing;
    return html`<ul class="cart" aria-label="Cart" data-testid="cart">
        ${lines.map(
          (l) => html`<li>
            <span>${l.quantity} × ${l.product.title}</span>
            <button type="button" aria-label=${`One less ${l.product.title}`} @click=${() => this.till!.trigger.remove({ link: l.product.link })}>−</button>
          </li>`,
        )}
      </ul>
      <p>Cart total: <strong data-testid="cart-total">${total.amount} ${total.currency}</strong> (charged instead of the keyed amount)</p>`;
  }

  private grid() {
    if (!this.products.length) return nothing;
    const cart = this.local!.value.context.cart;
    const cartCurrency = cart[0]?.product.currency;
    return html`<h2 id="products">Products</h2>
      <div class="grid" role="group" aria-labelledby="products">
        ${this.products.map((p) => {
          const limited = p.units_left !== null && p.units_left !== undefined;
          const off = (cartCurrency !== undefined && cartCurrency !== p.currency) || roomFor(cart, p) < 1;
          return html`<button type="button" ?disabled=${off} @click=${() => this.till!.trigger.add({ product: p })}>
            ${p.title}<br />${p.amount} ${p.currency}
            ${limited ? html`<br /><small data-testid="units-left">${p.units_left === 0 ? 'Sold out' : `${p.units_left} left`}</small>` : nothing}
          </button>`;
        })}
      </div>`;
  }

  private sale(checkout: CheckoutPageData) {
    const done = this.status === 'PAID' || ENDED.has(this.status);
    return html`${this.status === 'PAID' ? html`<div class="paid" role="status" data-testid="paid">Paid ✓</div>` : nothing}
      ${done ? html`<p><button class="primary" type="button" @click=${() => this.newSale()}>New sale</button></p>` : nothing}
      <anm-checkout .data=${checkout} @anm-status-change=${(e: CustomEvent<StatusChangeDetail>) => this.onStatus(e)}></anm-checkout>
      ${done ? nothing : html`<p><button type="button" @click=${() => this.newSale()}>Start another sale</button></p>`}`;
  }

  private sales() {
    const day = this.day;
    return html`<section aria-labelledby="today">
      <h2 id="today">Today</h2>
      ${day
        ? html`<p data-testid="totals">${day.totals.paid_count} paid of ${day.totals.count} · <strong>${day.totals.paid_anm_formatted}</strong></p>
            <div class="table-scroll" tabindex="0" role="region" aria-label="Today's sales">
              <table>
                <thead><tr><th scope="col">Time</th><th scope="col">Amount</th><th scope="col">Status</th><th scope="col">Note</th></tr></thead>
                <tbody>
                  ${day.data.map(
                    (s) => html`<tr>
                      <td>${s.created_at ? new Date(s.created_at).toLocaleTimeString([], TIME_OF_SALE) : '—'}</td>
                      <td class="amount">${s.currency === 'ANM' ? s.anm_amount_formatted : `${s.requested_amount ?? ''} ${s.currency}`}</td>
                      <td>${breakable(s.status)}</td>
                      <td class="note">${s.description ?? ''}</td>
                    </tr>`,
                  )}
                </tbody>
              </table>
            </div>`
        : html`<p>Loading…</p>`}
    </section>`;
  }
}

/** Hours and minutes: seconds added nothing at a counter, and widened the column past a tablet's panel at 10-12 o'clock. */
const TIME_OF_SALE: Intl.DateTimeFormatOptions = { hour: 'numeric', minute: '2-digit' };

customElements.define('anm-pos', AnmPos);

declare global {
  interface HTMLElementTagNameMap {
    'anm-pos': AnmPos;
  }
}
