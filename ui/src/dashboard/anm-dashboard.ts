/**
 * `<anm-dashboard>`: the frame of every dashboard page: header with the merchant, the
 * test/live switch that scopes every page, navigation and logout, and the page's element.
 * Copy requests from `<anm-copy-field>` inside any page are served here.
 */
import { LitElement, css, html, nothing, type TemplateResult } from 'lit';
import type { CopyRequest } from '../elements/anm-copy-field.ts';
import { api, errorText } from './api.ts';
import { dashStyles } from './styles.ts';
import type { DashMode, DashPage, DashPageData } from './types.ts';
import './anm-dash-account.ts';
import './anm-dash-home.ts';
import './anm-dash-invoices.ts';
import './anm-dash-keys.ts';
import './anm-dash-links.ts';
import './anm-dash-login.ts';
import './anm-dash-payment.ts';
import './anm-dash-payments.ts';
import './anm-dash-settings.ts';
import './anm-dash-webhooks.ts';

const NAV: Array<[DashPage, string, string]> = [
  ['home', 'Home', '/dashboard'],
  ['payments', 'Payments', '/dashboard/payments'],
  ['links', 'Payment links', '/dashboard/links'],
  ['invoices', 'Invoices', '/dashboard/invoices'],
  ['keys', 'API keys', '/dashboard/keys'],
  ['webhooks', 'Webhooks', '/dashboard/webhooks'],
  ['settings', 'Payout and widget', '/dashboard/settings'],
  ['account', 'Account', '/dashboard/account'],
];

export class AnmDashboard extends LitElement {
  static override properties = { data: { attribute: false }, error: { state: true } };

  static override styles = [
    ...dashStyles,
    css`
      header {
        display: flex;
        flex-wrap: wrap;
        gap: 8px 16px;
        align-items: center;
        justify-content: space-between;
        padding: 10px 16px;
        background: var(--anm-bg);
        border-bottom: 1px solid var(--anm-border);
      }
      .brand {
        font-weight: 700;
      }
      nav ul {
        display: flex;
        flex-wrap: wrap;
        gap: 4px;
        list-style: none;
        margin: 0;
        padding: 8px 16px;
        background: var(--anm-bg);
        border-bottom: 1px solid var(--anm-border);
      }
      nav a {
        display: inline-block;
        padding: 10px 10px;
        text-decoration: none;
        border-radius: 8px;
      }
      nav a[aria-current='page'] {
        background: var(--anm-info-bg);
        font-weight: 700;
      }
      main {
        max-width: 1000px;
        margin: 0 auto;
        padding: 16px;
      }
      .mode {
        display: flex;
        align-items: center;
        gap: 6px;
      }
      .mode label {
        margin: 0;
      }
      .mode select {
        width: auto;
      }
      .banner {
        background: var(--anm-warn-bg);
        color: var(--anm-warn);
        padding: 6px 16px;
        font-weight: 600;
      }
    `,
  ];

  declare data: DashPageData | undefined;
  declare error: string;

  constructor() {
    super();
    this.data = undefined;
    this.error = '';
  }

  private readonly onCopy = (e: CustomEvent<CopyRequest>): void => {
    const field = e.composedPath()[0] as HTMLElement & { copied?: boolean; failed?: boolean };
    const done = (ok: boolean) => {
      field.copied = ok;
      field.failed = !ok;
      if (!ok) window.getSelection()?.selectAllChildren(e.detail.target);
    };
    const clipboard = navigator.clipboard as Clipboard | undefined;
    if (!clipboard) done(false);
    else void clipboard.writeText(e.detail.value).then(() => done(true), () => done(false));
  };

  private async switchMode(mode: DashMode): Promise<void> {
    try {
      await api('mode', { body: { mode } });
      location.reload();
    } catch (err) {
      this.error = errorText(err);
    }
  }

  private async logout(): Promise<void> {
    try {
      await api('logout', { method: 'POST' });
    } finally {
      location.assign('/dashboard/login');
    }
  }

  private page(d: DashPageData): TemplateResult {
    switch (d.page) {
      case 'login':
      case 'signup':
        return html`<anm-dash-login .signup=${d.page === 'signup'} .signupOpen=${d.signup}></anm-dash-login>`;
      case 'home':
        return html`<anm-dash-home></anm-dash-home>`;
      case 'keys':
        return html`<anm-dash-keys .mode=${d.mode}></anm-dash-keys>`;
      case 'payments':
        return html`<anm-dash-payments></anm-dash-payments>`;
      case 'payment':
        return html`<anm-dash-payment .paymentId=${d.id ?? ''}></anm-dash-payment>`;
      case 'links':
        return html`<anm-dash-links .mode=${d.mode}></anm-dash-links>`;
      case 'invoices':
        return html`<anm-dash-invoices .mode=${d.mode}></anm-dash-invoices>`;
      case 'webhooks':
        return html`<anm-dash-webhooks .mode=${d.mode}></anm-dash-webhooks>`;
      case 'settings':
        return html`<anm-dash-settings></anm-dash-settings>`;
      case 'account':
        return html`<anm-dash-account></anm-dash-account>`;
    }
  }

  override render() {
    const d = this.data;
    if (!d) return nothing;
    const current = d.page === 'payment' ? 'payments' : d.page;
    if (!d.merchant) return html`<main>${this.page(d)}</main>`;
    return html`
      <header>
        <span class="brand">ANM Pay · ${d.merchant.name}</span>
        <div class="mode">
          <label for="mode">Mode</label>
          <select id="mode" @change=${(e: Event) => void this.switchMode((e.target as HTMLSelectElement).value as DashMode)}>
            <option value="test" ?selected=${d.mode === 'test'}>Test</option>
            <option value="live" ?selected=${d.mode === 'live'}>Live</option>
          </select>
        </div>
        <button type="button" @click=${() => void this.logout()}>Log out</button>
      </header>
      ${d.mode === 'test' ? html`<p class="banner" role="note">Test mode: no real ANM moves.</p>` : nothing}
      <nav aria-label="Dashboard">
        <ul>
          ${NAV.map(([p, label, href]) => html`<li><a href=${href} aria-current=${p === current ? 'page' : 'false'}>${label}</a></li>`)}
        </ul>
      </nav>
      <main @anm-copy=${this.onCopy}>
        ${this.error ? html`<p class="error" role="alert">${this.error}</p>` : nothing} ${this.page(d)}
      </main>
    `;
  }
}

customElements.define('anm-dashboard', AnmDashboard);

declare global {
  interface HTMLElementTagNameMap {
    'anm-dashboard': AnmDashboard;
  }
}
