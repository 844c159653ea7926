/** `<anm-amount>`: the amount due in ANM, and the fiat charge it was priced from, if any. */
import { LitElement, css, html, nothing } from 'lit';
import { tokens } from './tokens.ts';

export class AnmAmount extends LitElement {
  static override properties = {
    label: { type: String },
    anm: { type: String },
    nanm: { type: String },
    fiat: { attribute: false },
  };

  static override styles = [
    tokens,
    css`
      :host {
        display: block;
      }
      .label {
        margin: 0;
        color: var(--anm-muted);
        font-size: 0.9rem;
      }
      .anm {
        margin: 2px 0 0;
        font-size: clamp(1.6rem, 7vw, 2.2rem);
        font-weight: 700;
        overflow-wrap: anywhere;
      }
      .fiat {
        margin: 2px 0 0;
        color: var(--anm-muted);
      }
    `,
  ];

  declare label: string;
  declare anm: string;
  declare nanm: string;
  declare fiat: { amount: string; currency: string; rate: string } | null;

  constructor() {
    super();
    this.label = 'Amount due';
    this.anm = '';
    this.nanm = '';
    this.fiat = null;
  }

  override render() {
    return html`
      <p class="label" id="label">${this.label}</p>
      <p class="anm" aria-describedby="label">${this.anm}</p>
      ${this.fiat
        ? html`<p class="fiat">${this.fiat.amount} ${this.fiat.currency} <span>(locked rate: 1 ANM = ${this.fiat.rate} ${this.fiat.currency})</span></p>`
        : nothing}
    `;
  }
}

customElements.define('anm-amount', AnmAmount);

declare global {
  interface HTMLElementTagNameMap {
    'anm-amount': AnmAmount;
  }
}
