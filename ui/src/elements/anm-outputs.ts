/**
 * `<anm-outputs>`: the one transaction to send, spelled out: output 1 to the merchant's
 * payment address, output 2 (the protocol fee) to the treasury, and the reference it must carry.
 */
import { LitElement, css, html } from 'lit';
import type { CheckoutIntentView } from '../types.ts';
import './anm-copy-field.ts';
import { tokens } from './tokens.ts';

export class AnmOutputs extends LitElement {
  static override properties = {
    intent: { attribute: false },
    copied: { type: String },
    failed: { type: String },
  };

  static override styles = [
    tokens,
    css`
      :host {
        display: block;
      }
      ol {
        list-style: none;
        margin: 0;
        padding: 0;
      }
      li {
        border: 1px solid var(--anm-border);
        border-radius: var(--anm-radius);
        padding: 10px 14px;
        margin: 0 0 12px;
      }
      h3 {
        margin: 0 0 2px;
        font-size: 1rem;
      }
      .amount {
        margin: 0;
        font-weight: 600;
      }
      .nanm {
        color: var(--anm-muted);
        font-size: 0.85rem;
      }
    `,
  ];

  declare intent: CheckoutIntentView | undefined;
  declare copied: string;
  declare failed: string;

  constructor() {
    super();
    this.intent = undefined;
    this.copied = '';
    this.failed = '';
  }

  private field(label: string, field: string, value: string, hint = '') {
    return html`<anm-copy-field
      label=${label}
      field=${field}
      .value=${value}
      hint=${hint}
      ?copied=${this.copied === field}
      ?failed=${this.failed === field}
    ></anm-copy-field>`;
  }

  override render() {
    const i = this.intent;
    if (!i) return html``;
    return html`
      <ol aria-label="Transaction outputs">
        <li>
          <h3>Output 1: to the merchant</h3>
          <p class="amount">${i.merchant_amount_formatted} <span class="nanm">(${i.merchant_amount} nANM)</span></p>
          ${this.field('Merchant payment address', 'address', i.payment_address)} ${this.field('Output 1 amount in nANM', 'amount', i.merchant_amount)}
        </li>
        <li>
          <h3>Output 2: protocol fee (${(i.protocol_fee_bps / 100).toFixed(2)}%)</h3>
          <p class="amount">${i.protocol_fee_formatted} <span class="nanm">(${i.protocol_fee} nANM)</span></p>
          ${this.field('Fee address', 'fee_to', i.treasury_address)} ${this.field('Output 2 amount in nANM', 'fee', i.protocol_fee)}
        </li>
        <li>
          <h3>Payment reference</h3>
          ${this.field('Reference', 'reference', i.payment_reference, 'The transaction must carry this reference: it is how the payment is matched, not the amount.')}
        </li>
      </ol>
    `;
  }
}

customElements.define('anm-outputs', AnmOutputs);

declare global {
  interface HTMLElementTagNameMap {
    'anm-outputs': AnmOutputs;
  }
}
