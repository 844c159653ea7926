/**
 * `<anm-ops-login>` and `<anm-ops-logout>`. The operator token is typed into a password field
 * and posted as JSON with the page's CSRF token; it never goes into a URL or the page.
 */
import { LitElement, html, nothing } from 'lit';
import { opsFetch, setCsrf } from './api.ts';
import { opsStyles } from './styles.ts';

export class AnmOpsLogin extends LitElement {
  static override styles = opsStyles;
  static override properties = { error: { state: true }, busy: { state: true } };
  declare error: string | null;
  declare busy: boolean;

  constructor() {
    super();
    this.error = null;
    this.busy = false;
  }

  private async submit(e: SubmitEvent): Promise<void> {
    e.preventDefault();
    const form = e.target as HTMLFormElement;
    const v = new FormData(form).get('token');
    const token = typeof v === 'string' ? v : '';
    this.busy = true;
    this.error = null;
    try {
      const r = await opsFetch<{ csrf: string }>('/ops/login', { method: 'POST', body: { token } });
      setCsrf(r.csrf);
      form.reset();
      location.assign('/ops');
    } catch (err) {
      this.error = err instanceof Error ? err.message : String(err);
    } finally {
      this.busy = false;
    }
  }

  override render() {
    return html`<h1>Operator login</h1>
      <form @submit=${(e: SubmitEvent) => void this.submit(e)}>
        <p><label>Operator token<br /><input name="token" type="password" autocomplete="current-password" required size="60" /></label></p>
        <p class="muted">The token is in <code>.data/operator-token</code> (or <code>ANMPAY_OPERATOR_TOKEN</code>).</p>
        <button type="submit" ?disabled=${this.busy}>Log in</button>
        ${this.error ? html`<p role="alert" class="badge bad">${this.error}</p>` : nothing}
      </form>`;
  }
}

export class AnmOpsLogout extends LitElement {
  static override styles = opsStyles;

  private async out(): Promise<void> {
    await opsFetch('/ops/logout', { method: 'POST', body: {} }).catch(() => undefined);
    location.assign('/ops/login');
  }

  override render() {
    return html`<button type="button" class="secondary" @click=${() => void this.out()}>Log out</button>`;
  }
}

customElements.define('anm-ops-login', AnmOpsLogin);
customElements.define('anm-ops-logout', AnmOpsLogout);

declare global {
  interface HTMLElementTagNameMap {
    'anm-ops-login': AnmOpsLogin;
    'anm-ops-logout': AnmOpsLogout;
  }
}
