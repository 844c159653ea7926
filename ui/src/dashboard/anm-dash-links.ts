/**
 * `<anm-dash-links>`: payment links of the mode (DESIGN §7). Create a link; each link with its
 * page and short URL, price, units left / held / sold, and an oversold flag the merchant acts
 * on (refund); a link's recent holds; deactivate; and, in test mode, pay a link as its merchant.
 * Units are the link actor's counts, as the server reports them; nothing is computed here.
 */
import { LitElement, css, html, nothing } from 'lit';
import { api, field, when } from './api.ts';
import { ResourceController } from './resource-controller.ts';
import { dashStyles } from './styles.ts';

interface Link {
  id: string;
  title: string;
  slug: string;
  url: string;
  short_url: string;
  amount?: string;
  min_amount?: string;
  max_amount?: string;
  currency: string;
  units_total: number | null;
  units_held: number | null;
  units_sold: number | null;
  units_left: number | null;
  units_oversold: number;
  oversold_holds: string[];
  active: boolean;
}

interface Hold {
  id: string;
  payment_intent: string;
  status: string;
  released_reason: string | null;
  created_at: string;
  expires_at: string;
}

const price = (l: Link) => (l.amount !== undefined ? `${l.amount} ${l.currency}` : `${l.min_amount ?? ''}–${l.max_amount ?? ''} ${l.currency}`);

export class AnmDashLinks extends LitElement {
  static override properties = { mode: { type: String }, open: { state: true }, holds: { state: true } };
  static override styles = [
    ...dashStyles,
    css`
      .flag {
        color: var(--anm-error);
        background: var(--anm-error-bg);
        border-radius: 6px;
        padding: 2px 6px;
        font-weight: 600;
        white-space: nowrap;
      }
      .actions {
        display: flex;
        flex-wrap: wrap;
        gap: 6px;
      }
      td a {
        overflow-wrap: anywhere;
      }
    `,
  ];

  declare mode: string;
  declare open: string | null;
  declare holds: Hold[] | null;
  private readonly links = new ResourceController(this, async () => (await api<{ data: Link[] }>('links')).data);

  constructor() {
    super();
    this.mode = 'test';
    this.open = null;
    this.holds = null;
  }

  private create(e: SubmitEvent): void {
    e.preventDefault();
    const form = e.target;
    const units = field(form, 'units_total');
    const body: Record<string, unknown> = { title: field(form, 'title'), slug: field(form, 'slug'), amount: field(form, 'amount'), units_total: units === '' ? null : Number(units) };
    const description = field(form, 'description');
    if (description) body.description = description;
    void this.links.act(async () => {
      await api('links', { body });
      (form as HTMLFormElement).reset();
    });
  }

  private deactivate(l: Link): void {
    if (!confirm(`Deactivate "${l.title}"? Its page will answer 404; holds already taken still end.`)) return;
    void this.links.act(() => api(`links/${encodeURIComponent(l.id)}/deactivate`, { method: 'POST' }));
  }

  private async showHolds(l: Link): Promise<void> {
    this.open = this.open === l.id ? null : l.id;
    this.holds = null;
    if (this.open) this.holds = (await api<{ data: Hold[] }>(`links/${encodeURIComponent(l.id)}/holds`)).data;
  }

  private pay(l: Link): void {
    void this.links.act(async () => {
      const r = await api<{ checkout_url: string }>(`links/${encodeURIComponent(l.id)}/pay`, { method: 'POST', body: {} });
      location.assign(r.checkout_url);
    });
  }

  private units(l: Link) {
    if (l.units_total === null) return html`Unlimited`;
    return html`${l.units_left} left of ${l.units_total}<br /><span class="muted">${l.units_held} held · ${l.units_sold} sold</span>`;
  }

  private holdTable() {
    if (this.holds === null) return html`<p aria-busy="true">Loading…</p>`;
    if (this.holds.length === 0) return html`<p class="muted">No holds yet.</p>`;
    return html`<div class="table">
      <table>
        <thead><tr><th scope="col">Hold</th><th scope="col">Payment</th><th scope="col">Status</th><th scope="col">Taken</th><th scope="col">Until</th></tr></thead>
        <tbody>
          ${this.holds.map(
            (h) => html`<tr>
              <td><code>${h.id}</code></td>
              <td><a href="/dashboard/payments/${h.payment_intent}">${h.payment_intent}</a></td>
              <td class="status">${h.status === 'OVERSOLD' ? html`<span class="flag">OVERSOLD: refund</span>` : h.status}${h.released_reason ? html` <span class="muted">(${h.released_reason})</span>` : nothing}</td>
              <td>${when(h.created_at)}</td>
              <td>${when(h.expires_at)}</td>
            </tr>`,
          )}
        </tbody>
      </table>
    </div>`;
  }

  override render() {
    const links = this.links.value;
    return html`
      <h1>Payment links (${this.mode})</h1>
      ${this.links.error ? html`<p class="error" role="alert">${this.links.error}</p>` : nothing}
      <section aria-labelledby="new">
        <h2 id="new">Create a link</h2>
        <form class="row" @submit=${(e: SubmitEvent) => this.create(e)}>
          <div><label for="title">Title</label><input id="title" name="title" required maxlength="200" /></div>
          <div><label for="slug">Slug</label><input id="slug" name="slug" required pattern="[a-z0-9-]{1,64}" /></div>
          <div><label for="amount">Price (ANM)</label><input id="amount" name="amount" required inputmode="decimal" /></div>
          <div><label for="units">Units (empty: unlimited)</label><input id="units" name="units_total" type="number" min="1" /></div>
          <div><label for="description">Description</label><input id="description" name="description" maxlength="500" /></div>
          <button class="primary" type="submit">Create link</button>
        </form>
      </section>
      <section aria-labelledby="list">
        <h2 id="list">Links</h2>
        ${links === null
          ? html`<p aria-busy="true">Loading…</p>`
          : links.length === 0
            ? html`<p class="muted">No payment links in ${this.mode} mode yet.</p>`
            : html`<div class="table">
                <table>
                  <thead>
                    <tr><th scope="col">Link</th><th scope="col">Price</th><th scope="col">Units</th><th scope="col">Status</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr>
                  </thead>
                  <tbody>
                    ${links.map(
                      (l) => html`<tr>
                          <td>${l.title}<br /><a href=${l.url}>${new URL(l.url).pathname}</a> · <a href=${l.short_url}>${new URL(l.short_url).pathname}</a></td>
                          <td>${price(l)}</td>
                          <td>${this.units(l)}</td>
                          <td class="status">${l.active ? 'Active' : 'Inactive'}${l.units_oversold > 0 ? html`<br /><span class="flag" role="status">${l.units_oversold} oversold</span>` : nothing}</td>
                          <td class="actions">
                            <button type="button" aria-expanded=${this.open === l.id ? 'true' : 'false'} @click=${() => void this.showHolds(l)}>Holds</button>
                            ${l.active && this.mode === 'test' ? html`<button type="button" @click=${() => this.pay(l)}>Pay (test)</button>` : nothing}
                            ${l.active ? html`<button class="danger" type="button" @click=${() => this.deactivate(l)}>Deactivate</button>` : nothing}
                          </td>
                        </tr>
                        ${this.open === l.id ? html`<tr><td colspan="5">${this.holdTable()}</td></tr>` : nothing}`,
                    )}
                  </tbody>
                </table>
              </div>`}
      </section>
    `;
  }
}

customElements.define('anm-dash-links', AnmDashLinks);

declare global {
  interface HTMLElementTagNameMap {
    'anm-dash-links': AnmDashLinks;
  }
}
