/** `<anm-dash-login>`: the login form, or the signup form when `signup` (ANMPAY_OPEN_SIGNUP=1). */
import { LitElement, html, nothing } from 'lit';
import '../elements/anm-copy-field.ts';
import { api, errorText, field } from './api.ts';
import { dashStyles } from './styles.ts';

interface SignedUp {
  merchant_id: string;
  handle: string;
  keys: Record<'test' | 'live', { secret: string; publishable: string }>;
  redirect: string;
}

export class AnmDashLogin extends LitElement {
  static override properties = { signup: { type: Boolean }, signupOpen: { type: Boolean }, error: { state: true }, busy: { state: true }, created: { state: true } };
  static override styles = dashStyles;

  declare signup: boolean;
  declare signupOpen: boolean;
  declare error: string;
  declare busy: boolean;
  declare created: SignedUp | null;

  constructor() {
    super();
    this.signup = false;
    this.signupOpen = false;
    this.error = '';
    this.busy = false;
    this.created = null;
  }

  private async submit(e: SubmitEvent): Promise<void> {
    e.preventDefault();
    const v = (k: string) => field(e.target, k);
    this.busy = true;
    this.error = '';
    try {
      if (this.signup) {
        this.created = await api<SignedUp>('signup', { body: { name: v('name'), email: v('email'), password: v('password') } });
      } else {
        const r = await api<{ redirect: string }>('login', { body: { email: v('email'), password: v('password') } });
        location.assign(r.redirect);
      }
    } catch (err) {
      this.error = errorText(err);
    } finally {
      this.busy = false;
    }
  }

  override render() {
    if (this.created) {
      const k = this.created.keys.test;
      return html`<section>
        <h1>Account created</h1>
        <p class="notice">Your test keys are shown this once. Keep the secret key out of browser code.</p>
        <anm-copy-field label="Test secret key" field="secret" .value=${k.secret}></anm-copy-field>
        <anm-copy-field label="Test publishable key" field="publishable" .value=${k.publishable}></anm-copy-field>
        <p><a href=${this.created.redirect}>Go to the dashboard</a></p>
      </section>`;
    }
    return html`<section>
      <h1>${this.signup ? 'Create an ANM Pay account' : 'Log in to ANM Pay'}</h1>
      <form @submit=${(e: SubmitEvent) => void this.submit(e)}>
        ${this.signup ? html`<label for="name">Business name</label><input id="name" name="name" required maxlength="200" autocomplete="organization" />` : nothing}
        <label for="email">Email</label>
        <input id="email" name="email" type="email" required autocomplete="username" />
        <label for="password">Password</label>
        <input id="password" name="password" type="password" required autocomplete=${this.signup ? 'new-password' : 'current-password'} minlength=${this.signup ? 12 : 1} />
        ${this.error ? html`<p class="error" role="alert">${this.error}</p>` : nothing}
        <p><button class="primary" type="submit" ?disabled=${this.busy}>${this.signup ? 'Create account' : 'Log in'}</button></p>
      </form>
      ${this.signup
        ? html`<p><a href="/dashboard/login">I have an account</a></p>`
        : this.signupOpen
          ? html`<p><a href="/dashboard/signup">Create an account</a></p>`
          : nothing}
    </section>`;
  }
}

customElements.define('anm-dash-login', AnmDashLogin);

declare global {
  interface HTMLElementTagNameMap {
    'anm-dash-login': AnmDashLogin;
  }
}
