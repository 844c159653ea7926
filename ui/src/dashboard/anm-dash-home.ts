/** `<anm-dash-home>`: balance of the mode, the latest payments and the setup checklist. */
import { LitElement, html, nothing } from 'lit';
import { api } from './api.ts';
import { ResourceController } from './resource-controller.ts';
import './anm-dash-payment-table.ts';
import type { PaymentSummary } from './anm-dash-payment-table.ts';
import { dashStyles } from './styles.ts';

interface Home {
  mode: string;
  balance: { settled_formatted: string; pending_formatted: string };
  recent: PaymentSummary[];
  setup: { payout_address: string | null; payout_verified: boolean; webhook_url: string | null; active_secret_keys: number };
}

export class AnmDashHome extends LitElement {
  static override styles = dashStyles;

  private readonly home = new ResourceController(this, () => api<Home>('home'));

  override render() {
    if (this.home.error) return html`<p class="error" role="alert">${this.home.error}</p>`;
    const h = this.home.value;
    if (!h) return html`<p aria-busy="true">Loading…</p>`;
    const item = (done: boolean, text: string, href: string) => html`<li>${done ? '✓ Done:' : '○ To do:'} <a href=${href}>${text}</a></li>`;
    return html`
      <h1>Home</h1>
      <section aria-labelledby="bal">
        <h2 id="bal">Balance (${h.mode})</h2>
        <dl>
          <dt>Settled</dt>
          <dd class="status">${h.balance.settled_formatted}</dd>
          <dt>Pending</dt>
          <dd>${h.balance.pending_formatted}</dd>
        </dl>
      </section>
      <section aria-labelledby="setup">
        <h2 id="setup">Setup checklist</h2>
        <ul>
          ${item(h.setup.payout_address !== null && h.setup.payout_verified, h.setup.payout_address ? `Payout address ${h.setup.payout_verified ? 'verified' : 'not verified yet'}` : 'Set a payout address', '/dashboard/settings')}
          ${item(h.setup.webhook_url !== null, h.setup.webhook_url ? `Webhook: ${h.setup.webhook_url}` : 'Set a webhook endpoint', '/dashboard/webhooks')}
          ${item(h.setup.active_secret_keys > 0, `${h.setup.active_secret_keys} active secret key${h.setup.active_secret_keys === 1 ? '' : 's'}`, '/dashboard/keys')}
        </ul>
      </section>
      <section aria-labelledby="recent">
        <h2 id="recent">Recent payments</h2>
        ${h.recent.length ? html`<anm-dash-payment-table .rows=${h.recent}></anm-dash-payment-table>` : html`<p class="muted">No payments yet in ${h.mode} mode.</p>`}
        <p><a href="/dashboard/payments">All payments</a></p>
      </section>
      ${nothing}
    `;
  }
}

customElements.define('anm-dash-home', AnmDashHome);

declare global {
  interface HTMLElementTagNameMap {
    'anm-dash-home': AnmDashHome;
  }
}
