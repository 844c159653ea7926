/**
 * `<anm-status>`: the live status of the payment, in words, for each of the intent's states
 * (and the reorg/drop notices). Announced politely to screen readers. Success is shown only
 * for PAID (spec rule 7); detection and confirming are progress, never success.
 */
import { LitElement, css, html, nothing, type TemplateResult } from 'lit';
import type { CheckoutStatusView } from '../types.ts';
import type { Connection } from '../controllers/intent-status-controller.ts';
import { tokens } from './tokens.ts';

type Tone = 'info' | 'progress' | 'success' | 'warn' | 'error';

interface Shown {
  tone: Tone;
  title: string;
  body: TemplateResult | string;
}

function depth(v: CheckoutStatusView): TemplateResult {
  return html`<progress max=${v.required_confirmations} value=${v.confirmations} aria-label="Confirmations"></progress>
    <span class="depth">${v.confirmations} of ${v.required_confirmations} confirmations</span>`;
}

/** Words for a status view: a fixed table, no rule of the payment is decided here. */
function shown(v: CheckoutStatusView, embed: boolean, merchant: string): Shown {
  switch (v.status) {
    case 'CREATED':
    case 'AWAITING_PAYMENT':
      if (v.notice === 'reorged')
        return { tone: 'warn', title: 'Payment back to pending', body: 'The block holding your transaction was replaced (a chain reorganisation). Nothing to do yet: it is usually included again; if not, pay again.' };
      if (v.notice === 'dropped') return { tone: 'warn', title: 'Transaction dropped', body: 'Your transaction left the network without being included. You can pay again.' };
      return { tone: 'info', title: 'Waiting for payment', body: 'Send exactly the two outputs below in one transaction, with the reference.' };
    case 'PAYMENT_DETECTED':
      return { tone: 'progress', title: 'Payment detected', body: 'Your transaction was seen and is waiting to be included in a block. This is not settlement yet.' };
    case 'CONFIRMING':
      return { tone: 'progress', title: 'Confirming', body: html`Included in a block. The payment is settled at ${v.required_confirmations} confirmations. ${depth(v)}` };
    case 'OVERPAID':
      return {
        tone: 'warn',
        title: 'Overpaid, confirming',
        body: html`Your transaction paid ${v.excess_formatted ?? 'more than asked'} above the amount. Contact the merchant about the excess. ${depth(v)}`,
      };
    case 'UNDERPAID':
      // No depth bar: nothing the customer waits for here can complete this payment.
      return {
        tone: 'error',
        title: 'Underpaid',
        body: html`Your transaction is short by ${v.shortfall_formatted ?? 'part of the amount'}, so it does not pay this request, and no further
          transaction can complete it. <strong>What you can do:</strong> contact ${merchant} and give them the transaction below; they can
          refund what you sent or ask you to pay a new request. Do not send the difference on its own.`,
      };
    case 'PAID':
      return {
        tone: 'success',
        title: 'Paid',
        body: html`Your payment is settled at ${v.required_confirmations} confirmations.${v.excess_formatted ? ` It paid ${v.excess_formatted} above the amount.` : ''}
        ${embed ? ' You can close this window.' : ''}`,
      };
    case 'EXPIRED':
      return {
        tone: 'error',
        title: 'Expired',
        body: v.final
          ? 'This payment request has expired. Do not send a payment for it.'
          : 'This payment request has expired: do not send a payment. A transaction already signed and sent can still be detected for a while.',
      };
    case 'FAILED':
      return {
        tone: 'error',
        title: 'Transaction failed',
        body: v.payable ? 'Your transaction failed on chain and paid nothing. You can send a new one.' : 'Your transaction failed on chain and paid nothing.',
      };
    case 'REFUNDED':
      return { tone: 'info', title: 'Refunded', body: 'This payment was refunded in full by the merchant.' };
    case 'PARTIALLY_REFUNDED':
      return { tone: 'info', title: 'Partially refunded', body: 'This payment was settled and part of it was refunded by the merchant.' };
    default:
      return { tone: 'info', title: v.status, body: '' };
  }
}

export class AnmStatus extends LitElement {
  static override properties = {
    view: { attribute: false },
    connection: { type: String },
    embed: { type: Boolean },
    merchant: { type: String },
  };

  static override styles = [
    tokens,
    css`
      :host {
        display: block;
      }
      .box {
        border-radius: var(--anm-radius);
        padding: 14px 16px;
        border: 1px solid var(--anm-border);
        background: var(--anm-info-bg);
      }
      .box.success {
        background: var(--anm-success-bg);
        border-color: var(--anm-success);
      }
      .box.warn {
        background: var(--anm-warn-bg);
        border-color: var(--anm-warn);
      }
      .box.error {
        background: var(--anm-error-bg);
        border-color: var(--anm-error);
      }
      h2 {
        margin: 0 0 4px;
        font-size: 1.2rem;
      }
      .success h2 {
        color: var(--anm-success);
      }
      .warn h2 {
        color: var(--anm-warn);
      }
      .error h2 {
        color: var(--anm-error);
      }
      p {
        margin: 0;
      }
      progress {
        display: block;
        width: 100%;
        height: 12px;
        margin: 10px 0 4px;
        accent-color: var(--anm-accent);
      }
      .depth {
        font-variant-numeric: tabular-nums;
        font-size: 0.9rem;
      }
      .conn {
        margin: 8px 0 0;
        font-size: 0.85rem;
        color: var(--anm-muted);
      }
      .tx {
        margin: 8px 0 0;
        font-size: 0.85rem;
      }
    `,
  ];

  declare view: CheckoutStatusView | undefined;
  declare connection: Connection;
  declare embed: boolean;
  /** Whom the customer is told to contact when something needs a person. */
  declare merchant: string;

  constructor() {
    super();
    this.view = undefined;
    this.connection = 'connecting';
    this.embed = false;
    this.merchant = 'the merchant';
  }

  override render() {
    const v = this.view;
    if (!v) return nothing;
    const s = shown(v, this.embed, this.merchant);
    return html`
      <section class="box ${s.tone}" aria-labelledby="status-title" data-status=${v.status}>
        <div role="status" aria-live="polite" aria-atomic="true">
          <h2 id="status-title">${s.title}</h2>
          <p>${s.body}</p>
        </div>
        ${v.transaction_hash ? html`<p class="tx">Transaction <code>${v.transaction_hash}</code></p>` : nothing}
        ${this.connection === 'reconnecting' && !v.final ? html`<p class="conn">Live updates interrupted, reconnecting…</p>` : nothing}
      </section>
    `;
  }
}

customElements.define('anm-status', AnmStatus);

declare global {
  interface HTMLElementTagNameMap {
    'anm-status': AnmStatus;
  }
}
