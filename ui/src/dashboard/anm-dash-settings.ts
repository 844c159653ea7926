/**
 * `<anm-dash-settings>`: the payout address of the mode and its verification (set it, run
 * the shown `anmpay payout verify` command with the address's wallet, paste the signature),
 * the origins allowed to embed the checkout with the widget, and the shop directory opt-in.
 */
import { LitElement, html, nothing } from 'lit';
import '../elements/anm-copy-field.ts';
import { api, field, when } from './api.ts';
import { ResourceController } from './resource-controller.ts';
import { dashStyles } from './styles.ts';

interface Payout {
  mode: string;
  address: string | null;
  verified: boolean;
  verified_at: string | null;
  challenge: string | null;
  command: string | null;
}

interface ShopSetting {
  listed: boolean;
  description: string;
  visible: boolean;
  directory_enabled: boolean;
}

export class AnmDashSettings extends LitElement {
  static override properties = { message: { state: true } };
  static override styles = dashStyles;

  declare message: string;
  private readonly payout = new ResourceController(this, () => api<Payout>('payout'));
  private readonly origins = new ResourceController(this, async () => (await api<{ origins: string[] }>('origins')).origins);
  private readonly shop = new ResourceController(this, () => api<ShopSetting>('shop'));

  constructor() {
    super();
    this.message = '';
  }

  private setAddress(e: SubmitEvent): void {
    e.preventDefault();
    const address = field(e.target, 'address').trim();
    void this.payout.act(async () => {
      await api('payout', { body: { address } });
      this.message = 'Payout address saved. Verify it with the command below.';
    });
  }

  private verify(e: SubmitEvent): void {
    e.preventDefault();
    const signature = field(e.target, 'signature').trim();
    void this.payout.act(async () => {
      await api('payout/verify', { body: { signature } });
      this.message = 'Payout address verified.';
    });
  }

  private saveOrigins(e: SubmitEvent): void {
    e.preventDefault();
    const origins = field(e.target, 'origins')
      .split(/\s+/)
      .filter((o) => o.length > 0);
    void this.origins.act(async () => {
      await api('origins', { body: { origins } });
      this.message = 'Allowed origins saved.';
    });
  }

  private saveShop(e: SubmitEvent): void {
    e.preventDefault();
    const form = e.target as HTMLFormElement;
    const listed = (form.elements.namedItem('listed') as HTMLInputElement).checked;
    const description = field(form, 'description').trim();
    void this.shop.act(async () => {
      await api('shop', { body: { listed, description } });
      this.message = 'Shop listing saved.';
    });
  }

  private shopState(s: ShopSetting): string {
    if (!s.listed) return 'Not listed';
    if (!s.visible) return 'Listed once your live payout address is verified';
    return s.directory_enabled ? 'Listed in the shop directory' : 'Listed (your storefront is open; this service does not show the directory)';
  }

  override render() {
    const p = this.payout.value;
    const s = this.shop.value;
    const error = this.payout.error || this.origins.error || this.shop.error;
    return html`
      <h1>Payout and widget</h1>
      ${error ? html`<p class="error" role="alert">${error}</p>` : nothing}
      ${this.message ? html`<p class="notice" role="status">${this.message}</p>` : nothing}
      <section aria-labelledby="payout">
        <h2 id="payout">Payout address (${p?.mode ?? ''})</h2>
        ${p?.address
          ? html`<p>
              <code>${p.address}</code><br /><strong data-testid="payout-state">${p.verified ? `Verified ${when(p.verified_at)}` : 'Not verified'}</strong>
            </p>`
          : html`<p class="muted">No payout address in this mode yet.</p>`}
        <form class="row" @submit=${(e: SubmitEvent) => this.setAddress(e)}>
          <div><label for="address">New payout address</label><input id="address" name="address" required maxlength="200" autocomplete="off" /></div>
          <button type="submit">Save address</button>
        </form>
        ${p?.command
          ? html`<p>Run this where the address's wallet file is, then paste what it prints:</p>
              <anm-copy-field label="Command" field="command" .value=${p.command}></anm-copy-field>
              <form @submit=${(e: SubmitEvent) => this.verify(e)}>
                <label for="signature">Signature printed by the command</label>
                <textarea id="signature" name="signature" rows="3" required></textarea>
                <p><button class="primary" type="submit">Verify address</button></p>
              </form>`
          : nothing}
      </section>
      <section aria-labelledby="origins">
        <h2 id="origins">Widget: allowed origins</h2>
        <p class="muted">Pages on these origins may open the checkout with <code>widget.js</code> (one per line, e.g. https://shop.example; http://localhost:* allows any local port, for test payments only).</p>
        <form @submit=${(e: SubmitEvent) => this.saveOrigins(e)}>
          <label for="origins-list">Allowed origins</label>
          <textarea id="origins-list" name="origins" rows="4" .value=${(this.origins.value ?? []).join('\n')}></textarea>
          <p><button type="submit">Save origins</button></p>
        </form>
      </section>
      <section aria-labelledby="shop">
        <h2 id="shop">Shop directory</h2>
        <p class="muted">Your active live payment links, as a storefront at <code>/shop/&lt;your handle&gt;</code>, listed in <code>/shop</code>. Needs a verified live payout address.</p>
        ${s ? html`<p><strong data-testid="shop-state">${this.shopState(s)}</strong></p>` : nothing}
        <form @submit=${(e: SubmitEvent) => this.saveShop(e)}>
          <p><label><input type="checkbox" name="listed" .checked=${s?.listed ?? false} /> List my shop</label></p>
          <label for="shop-description">Line shown under your name</label>
          <input id="shop-description" name="description" maxlength="300" .value=${s?.description ?? ''} />
          <p><button type="submit">Save shop listing</button></p>
        </form>
      </section>
    `;
  }
}

customElements.define('anm-dash-settings', AnmDashSettings);

declare global {
  interface HTMLElementTagNameMap {
    'anm-dash-settings': AnmDashSettings;
  }
}
