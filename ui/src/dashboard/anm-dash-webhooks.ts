/**
 * `<anm-dash-webhooks>`: the endpoint of the mode (URL; the signing secret shown once on
 * create and rotate), a test event, and the delivery log with every attempt and redeliver.
 */
import { LitElement, html, nothing } from 'lit';
import '../elements/anm-copy-field.ts';
import { api, errorText, field, when } from './api.ts';
import { dashStyles } from './styles.ts';

interface Endpoint {
  endpoint_id: string;
  url: string;
  status: string;
  disabled_reason: string | null;
  secrets: Array<{ created_at: string; expires_at: string | null }>;
}
interface Delivery {
  id: string;
  event_id: string;
  event_type: string;
  status: string;
  attempts: number;
  next_attempt_at: string | null;
  last_status: number | null;
  created_at: string;
}
interface Attempt {
  attempt: number;
  manual: boolean;
  status: number | null;
  latency_ms: number | null;
  response: string | null;
  error: string | null;
  at: string;
}

export class AnmDashWebhooks extends LitElement {
  static override properties = {
    mode: { type: String },
    endpoint: { state: true },
    deliveries: { state: true },
    secret: { state: true },
    attempts: { state: true },
    message: { state: true },
    error: { state: true },
  };
  static override styles = dashStyles;

  declare mode: string;
  declare endpoint: Endpoint | null;
  declare deliveries: Delivery[] | null;
  declare secret: string;
  declare attempts: Record<string, Attempt[]>;
  declare message: string;
  declare error: string;

  constructor() {
    super();
    this.mode = 'test';
    this.endpoint = null;
    this.deliveries = null;
    this.secret = '';
    this.attempts = {};
    this.message = '';
    this.error = '';
  }

  override connectedCallback(): void {
    super.connectedCallback();
    void this.load();
  }

  private async run(work: () => Promise<void>): Promise<void> {
    this.error = '';
    try {
      await work();
    } catch (err) {
      this.error = errorText(err);
    }
  }

  private async load(): Promise<void> {
    await this.run(async () => {
      const r = await api<{ endpoint: Endpoint | null; deliveries: { data: Delivery[] } }>('webhooks');
      this.endpoint = r.endpoint;
      this.deliveries = r.deliveries.data;
      for (const id of Object.keys(this.attempts)) await this.showAttempts(id, true);
    });
  }

  private async save(e: SubmitEvent): Promise<void> {
    e.preventDefault();
    const url = field(e.target, 'url').trim();
    await this.run(async () => {
      const r = await api<{ secret: string | null }>('webhooks', { body: { url } });
      this.secret = r.secret ?? '';
      this.message = r.secret ? 'Endpoint saved. Its signing secret is shown below, once.' : 'Endpoint URL changed; the signing secret is unchanged.';
      await this.load();
    });
  }

  private async rotate(): Promise<void> {
    if (!confirm('Rotate the signing secret? The old one keeps signing during the grace period.')) return;
    await this.run(async () => {
      const r = await api<{ secret: string; previous_secrets_expire_at: string }>('webhooks/rotate', { method: 'POST' });
      this.secret = r.secret;
      this.message = `New secret below, shown once. Deliveries are signed with both until ${when(r.previous_secrets_expire_at)}.`;
      await this.load();
    });
  }

  private async test(): Promise<void> {
    await this.run(async () => {
      const r = await api<{ event_id: string }>('webhooks/test', { method: 'POST' });
      this.message = `Test event ${r.event_id} queued. Refresh the log to see its delivery.`;
      await this.load();
    });
  }

  private async showAttempts(id: string, refresh = false): Promise<void> {
    if (!refresh && this.attempts[id]) {
      const { [id]: _gone, ...rest } = this.attempts;
      this.attempts = rest;
      return;
    }
    await this.run(async () => {
      const d = await api<{ attempt_log: Attempt[] }>(`webhooks/deliveries/${encodeURIComponent(id)}`);
      this.attempts = { ...this.attempts, [id]: d.attempt_log };
    });
  }

  private async redeliver(id: string): Promise<void> {
    await this.run(async () => {
      await api(`webhooks/deliveries/${encodeURIComponent(id)}/redeliver`, { method: 'POST' });
      this.message = 'Redelivery queued.';
      await this.load();
    });
  }

  private attemptTable(list: Attempt[]) {
    if (list.length === 0) return html`<p class="muted">No attempts yet.</p>`;
    return html`<table>
      <thead><tr><th scope="col">#</th><th scope="col">When</th><th scope="col">HTTP status</th><th scope="col">Latency</th><th scope="col">Response</th></tr></thead>
      <tbody>
        ${list.map(
          (a) => html`<tr>
            <td>${a.attempt}${a.manual ? ' (manual)' : ''}</td>
            <td>${when(a.at)}</td>
            <td>${a.status ?? a.error ?? '—'}</td>
            <td>${a.latency_ms === null ? '—' : `${a.latency_ms} ms`}</td>
            <td><code>${(a.response ?? '').slice(0, 200)}</code></td>
          </tr>`,
        )}
      </tbody>
    </table>`;
  }

  override render() {
    const e = this.endpoint;
    return html`
      <h1>Webhooks (${this.mode})</h1>
      ${this.error ? html`<p class="error" role="alert">${this.error}</p>` : nothing}
      ${this.message ? html`<p class="notice" role="status">${this.message}</p>` : nothing}
      <section aria-labelledby="ep">
        <h2 id="ep">Endpoint</h2>
        <form class="row" @submit=${(ev: SubmitEvent) => void this.save(ev)}>
          <div><label for="url">Endpoint URL</label><input id="url" name="url" type="url" required maxlength="2048" .value=${e?.url ?? ''} placeholder="https://example.com/webhooks/anmpay" /></div>
          <button class="primary" type="submit">Save endpoint</button>
        </form>
        ${e
          ? html`<p>Status: <strong>${e.status}</strong>${e.disabled_reason ? ` (${e.disabled_reason})` : ''} · ${e.secrets.length} active signing secret${e.secrets.length === 1 ? '' : 's'}</p>
              <p class="row">
                <button type="button" @click=${() => void this.rotate()}>Rotate secret</button>
                <button type="button" @click=${() => void this.test()}>Send test event</button>
              </p>`
          : html`<p class="muted">No endpoint in ${this.mode} mode yet.</p>`}
        ${this.secret ? html`<anm-copy-field label="Signing secret" field="secret" .value=${this.secret} hint="Shown once. Verify every delivery with it (docs: webhooks)."></anm-copy-field>` : nothing}
      </section>
      <section aria-labelledby="log">
        <h2 id="log">Delivery log</h2>
        <p><button type="button" @click=${() => void this.load()}>Refresh log</button></p>
        ${this.deliveries === null
          ? html`<p aria-busy="true">Loading…</p>`
          : this.deliveries.length === 0
            ? html`<p class="muted">No deliveries yet.</p>`
            : html`<div class="table">
                <table>
                  <thead>
                    <tr><th scope="col">Event</th><th scope="col">Status</th><th scope="col">Attempts</th><th scope="col">Last HTTP</th><th scope="col">Next retry</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr>
                  </thead>
                  <tbody>
                    ${this.deliveries.map(
                      (d) => html`<tr>
                          <td><code>${d.event_type}</code><br /><span class="muted">${d.event_id}</span></td>
                          <td class="status">${d.status}</td>
                          <td>${d.attempts}</td>
                          <td>${d.last_status ?? '—'}</td>
                          <td>${when(d.next_attempt_at)}</td>
                          <td>
                            <button type="button" aria-expanded=${this.attempts[d.id] ? 'true' : 'false'} aria-label="Attempts of ${d.event_id}" @click=${() => void this.showAttempts(d.id)}>Attempts</button>
                            <button type="button" aria-label="Redeliver ${d.event_id}" @click=${() => void this.redeliver(d.id)}>Redeliver</button>
                          </td>
                        </tr>
                        ${this.attempts[d.id] ? html`<tr><td colspan="6">${this.attemptTable(this.attempts[d.id]!)}</td></tr>` : nothing}`,
                    )}
                  </tbody>
                </table>
              </div>`}
      </section>
    `;
  }
}

customElements.define('anm-dash-webhooks', AnmDashWebhooks);

declare global {
  interface HTMLElementTagNameMap {
    'anm-dash-webhooks': AnmDashWebhooks;
  }
}
