/** `<anm-dash-account>`: password change and the account's active sessions, each revocable. */
import { LitElement, html, nothing } from 'lit';
import { api, field, when } from './api.ts';
import { ResourceController } from './resource-controller.ts';
import { dashStyles } from './styles.ts';

interface SessionRow {
  id: string;
  current: boolean;
  ip: string | null;
  user_agent: string | null;
  created_at: string;
  last_seen_at: string;
}

export class AnmDashAccount extends LitElement {
  static override properties = { message: { state: true } };
  static override styles = dashStyles;

  declare message: string;
  private readonly sessions = new ResourceController(this, async () => (await api<{ data: SessionRow[] }>('sessions')).data);

  constructor() {
    super();
    this.message = '';
  }

  private changePassword(e: SubmitEvent): void {
    e.preventDefault();
    const form = e.target as HTMLFormElement;
    void this.sessions.act(async () => {
      const r = await api<{ other_sessions_ended: number }>('password', { body: { current: field(form, 'current'), next: field(form, 'next') } });
      form.reset();
      this.message = `Password changed. ${r.other_sessions_ended} other session(s) logged out.`;
    });
  }

  private revoke(id: string): void {
    void this.sessions.act(() => api(`sessions/${encodeURIComponent(id)}/revoke`, { method: 'POST' }));
  }

  override render() {
    const sessions = this.sessions.value;
    return html`
      <h1>Account</h1>
      ${this.sessions.error ? html`<p class="error" role="alert">${this.sessions.error}</p>` : nothing}
      ${this.message ? html`<p class="notice" role="status">${this.message}</p>` : nothing}
      <section aria-labelledby="pw">
        <h2 id="pw">Change password</h2>
        <form @submit=${(e: SubmitEvent) => this.changePassword(e)}>
          <label for="current">Current password</label>
          <input id="current" name="current" type="password" required autocomplete="current-password" />
          <label for="next">New password (at least 12 characters)</label>
          <input id="next" name="next" type="password" required minlength="12" autocomplete="new-password" />
          <p><button class="primary" type="submit">Change password</button></p>
        </form>
      </section>
      <section aria-labelledby="ss">
        <h2 id="ss">Sessions</h2>
        ${sessions === null
          ? html`<p aria-busy="true">Loading…</p>`
          : html`<div class="table"><table>
              <thead><tr><th scope="col">Browser</th><th scope="col">Address</th><th scope="col">Last seen</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
              <tbody>
                ${sessions.map(
                  (s) => html`<tr>
                    <td>${s.user_agent ?? '—'}${s.current ? html` <strong>(this one)</strong>` : nothing}</td>
                    <td>${s.ip ?? '—'}</td>
                    <td>${when(s.last_seen_at)}</td>
                    <td>${s.current ? nothing : html`<button class="danger" type="button" @click=${() => this.revoke(s.id)}>Log out</button>`}</td>
                  </tr>`,
                )}
              </tbody>
            </table></div>`}
      </section>
    `;
  }
}

customElements.define('anm-dash-account', AnmDashAccount);

declare global {
  interface HTMLElementTagNameMap {
    'anm-dash-account': AnmDashAccount;
  }
}
