/**
 * `<anm-dash-keys>`: API keys of the mode. A new key is shown once, with a copy button;
 * revoking asks first. Secret keys belong on servers only (spec Authentication 5).
 */
import { LitElement, html, nothing } from 'lit';
import '../elements/anm-copy-field.ts';
import { api, field, when } from './api.ts';
import { ResourceController } from './resource-controller.ts';
import { dashStyles } from './styles.ts';

interface Key {
  id: string;
  kind: 'secret' | 'publishable';
  prefix: string;
  created_at: string;
  revoked_at: string | null;
  last_used_at: string | null;
}

export class AnmDashKeys extends LitElement {
  static override properties = { mode: { type: String }, created: { state: true } };
  static override styles = dashStyles;

  declare mode: string;
  declare created: { id: string; key: string; kind: string } | null;
  private readonly keys = new ResourceController(this, async () => (await api<{ data: Key[] }>('keys')).data);

  constructor() {
    super();
    this.mode = 'test';
    this.created = null;
  }

  private create(e: SubmitEvent): void {
    e.preventDefault();
    const kind = field(e.target, 'kind');
    void this.keys.act(async () => (this.created = await api<{ id: string; key: string; kind: string }>('keys', { body: { kind } })));
  }

  private revoke(k: Key): void {
    if (!confirm(`Revoke ${k.prefix}…? Requests with it will be refused at once.`)) return;
    void this.keys.act(() => api(`keys/${encodeURIComponent(k.id)}/revoke`, { method: 'POST' }));
  }

  override render() {
    const keys = this.keys.value;
    return html`
      <h1>API keys (${this.mode})</h1>
      ${this.keys.error ? html`<p class="error" role="alert">${this.keys.error}</p>` : nothing}
      <section aria-labelledby="new">
        <h2 id="new">Create a key</h2>
        <form class="row" @submit=${(e: SubmitEvent) => this.create(e)}>
          <div>
            <label for="kind">Kind</label>
            <select id="kind" name="kind">
              <option value="secret">Secret (server side)</option>
              <option value="publishable">Publishable (widget)</option>
            </select>
          </div>
          <button class="primary" type="submit">Create key</button>
        </form>
        ${this.created
          ? html`<div role="status">
              <p class="notice">This ${this.created.kind} key is shown once. Copy it now; it cannot be shown again.</p>
              <anm-copy-field label="New ${this.created.kind} key" field="key" .value=${this.created.key}></anm-copy-field>
            </div>`
          : nothing}
      </section>
      <section aria-labelledby="list">
        <h2 id="list">Keys</h2>
        ${keys === null
          ? html`<p aria-busy="true">Loading…</p>`
          : html`<div class="table">
              <table>
                <thead>
                  <tr><th scope="col">Key</th><th scope="col">Kind</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col">Status</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr>
                </thead>
                <tbody>
                  ${keys.map(
                    (k) => html`<tr>
                      <td><code>${k.prefix}…</code></td>
                      <td>${k.kind}</td>
                      <td>${when(k.created_at)}</td>
                      <td>${k.kind === 'secret' ? when(k.last_used_at) : 'n/a'}</td>
                      <td class="status">${k.revoked_at ? `Revoked ${when(k.revoked_at)}` : 'Active'}</td>
                      <td>${k.revoked_at ? nothing : html`<button class="danger" type="button" aria-label="Revoke ${k.prefix}" @click=${() => this.revoke(k)}>Revoke</button>`}</td>
                    </tr>`,
                  )}
                </tbody>
              </table>
            </div>`}
      </section>
    `;
  }
}

customElements.define('anm-dash-keys', AnmDashKeys);

declare global {
  interface HTMLElementTagNameMap {
    'anm-dash-keys': AnmDashKeys;
  }
}
