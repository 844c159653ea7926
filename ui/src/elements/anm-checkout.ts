/**
 * `<anm-checkout>`: the hosted checkout page. Server state (the status view) comes from the
 * IntentStatusController (SSE); page-local state (copy feedback, details toggle) lives in an
 * @xstate/store. It fires `anm-status-change` on every status view and `anm-done` when the
 * customer closes an embedded, paid checkout; it never decides anything about the payment.
 */
import { LitElement, css, html, nothing } from 'lit';
import { IntentStatusController } from '../controllers/intent-status-controller.ts';
import { StoreController } from '../controllers/store-controller.ts';
import { createCheckoutStore, type CopyField } from '../state/checkout-store.ts';
import type { CheckoutPageData, CheckoutStatusView } from '../types.ts';
import './anm-amount.ts';
import type { CopyRequest } from './anm-copy-field.ts';
import './anm-copy-field.ts';
import './anm-countdown.ts';
import './anm-outputs.ts';
import './anm-qr.ts';
import './anm-status.ts';
import { tokens } from './tokens.ts';

const COPY_FIELDS: readonly string[] = ['uri', 'total', 'address', 'amount', 'fee', 'fee_to', 'reference'];

/**
 * Phones and tablets cannot scan a QR code shown on their own screen: there the outputs are
 * how the customer pays, so they start expanded while payable. With a mouse the QR code or
 * the wallet link does it, and the breakdown starts collapsed.
 */
const coarsePointer = (): boolean => typeof matchMedia === 'function' && matchMedia('(pointer: coarse)').matches;

function selectContents(el: HTMLElement): void {
  const range = document.createRange();
  range.selectNodeContents(el);
  const sel = window.getSelection();
  sel?.removeAllRanges();
  sel?.addRange(range);
}

export class AnmCheckout extends LitElement {
  static override properties = {
    data: { attribute: false },
  };

  static override styles = [
    tokens,
    css`
      :host {
        display: block;
        max-width: 520px;
        margin: 0 auto;
        padding: 16px;
        box-sizing: border-box;
      }
      article > * + * {
        margin-top: 18px;
      }
      header p {
        margin: 0;
      }
      .pay-to {
        color: var(--anm-muted);
        font-size: 0.9rem;
      }
      h1 {
        margin: 0;
        font-size: 1.35rem;
        overflow-wrap: anywhere;
      }
      .badge {
        display: inline-block;
        margin-top: 6px;
        padding: 2px 10px;
        border-radius: 999px;
        background: var(--anm-warn-bg);
        color: var(--anm-warn);
        border: 1px solid var(--anm-warn);
        font-size: 0.85rem;
        font-weight: 600;
      }
      .description {
        margin-top: 6px;
        white-space: pre-wrap;
        overflow-wrap: anywhere;
      }
      h2 {
        font-size: 1.1rem;
        margin: 0 0 10px;
      }
      .cta {
        display: block;
        text-align: center;
        padding: 12px 16px;
        border-radius: 8px;
        background: var(--anm-success);
        color: #fff;
        font-weight: 700;
        text-decoration: none;
      }
      .cta:hover {
        text-decoration: underline;
      }
      .wallet-link {
        display: block;
        text-align: center;
        margin: 12px 0 0;
        font-weight: 600;
      }
      details {
        border-top: 1px solid var(--anm-border);
        padding-top: 12px;
      }
      summary {
        cursor: pointer;
        font-weight: 600;
        padding: 10px 0;
      }
      footer {
        border-top: 1px solid var(--anm-border);
        padding-top: 12px;
        font-size: 0.85rem;
        color: var(--anm-muted);
      }
      footer p {
        margin: 4px 0;
      }
      .done {
        width: 100%;
      }
    `,
  ];

  declare data: CheckoutPageData | undefined;
  private readonly store = createCheckoutStore();
  private readonly local = new StoreController(this, this.store);
  private readonly live = new IntentStatusController(this, (view) => this.announce(view));
  private copyTimer: ReturnType<typeof setTimeout> | undefined;

  constructor() {
    super();
    this.data = undefined;
  }

  protected override willUpdate(changed: Map<PropertyKey, unknown>): void {
    if (changed.has('data') && this.data) this.live.follow(this.data.events_url, this.data.status);
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    clearTimeout(this.copyTimer);
  }

  private announce(view: CheckoutStatusView): void {
    this.dispatchEvent(new CustomEvent<CheckoutStatusView>('anm-status-change', { detail: view, bubbles: true, composed: true }));
  }

  private readonly onCopy = (e: CustomEvent<CopyRequest>): void => {
    const { field, value, target } = e.detail;
    if (!COPY_FIELDS.includes(field)) return;
    const f = field as CopyField;
    const failed = () => {
      selectContents(target);
      this.store.trigger.copyFailed({ field: f });
    };
    // Absent outside secure contexts (plain http on another host than localhost).
    const clipboard = navigator.clipboard as Clipboard | undefined;
    if (!clipboard) failed();
    else void clipboard.writeText(value).then(() => this.store.trigger.copied({ field: f }), failed);
    clearTimeout(this.copyTimer);
    this.copyTimer = setTimeout(() => this.store.trigger.copyCleared(), 4000);
  };

  /** What the last render asked `<details>` to be; its own toggle events echo that and are not the customer's. */
  private detailsShouldBeOpen = false;

  private readonly onToggle = (e: Event): void => {
    const open = (e.target as HTMLDetailsElement).open;
    if (open !== this.detailsShouldBeOpen) this.store.trigger.detailsToggled({ open });
  };

  private readonly done = (): void => {
    this.dispatchEvent(new CustomEvent('anm-done', { bubbles: true, composed: true }));
  };

  override render() {
    const d = this.data;
    const view = this.live.view;
    if (!d || !view) return html`<slot></slot>`;
    const i = d.intent;
    const local = this.local.value.context;
    const merchant = d.merchant.name || 'the merchant';
    const embed = d.embed !== null;
    this.detailsShouldBeOpen = local.detailsOpen ?? (view.payable && coarsePointer());
    return html`
      <article aria-labelledby="title" @anm-copy=${this.onCopy}>
        <header>
          <p class="pay-to">Payment to</p>
          <h1 id="title">${merchant}</h1>
          ${i.mode === 'test' ? html`<p class="badge">Test mode: no real ANM moves</p>` : nothing}
          ${i.description ? html`<p class="description">${i.description}</p>` : nothing}
        </header>
        <anm-amount label=${view.payable ? 'Amount due' : 'Amount'} .anm=${i.anm_amount_formatted} .nanm=${i.anm_amount} .fiat=${i.fiat}></anm-amount>
        <anm-status .view=${view} connection=${this.live.connection} ?embed=${embed} merchant=${merchant}></anm-status>
        ${view.status === 'PAID' && view.success_url && !embed ? html`<a class="cta" href=${view.success_url}>Continue to ${merchant}</a>` : nothing}
        ${view.status === 'PAID' && embed ? html`<button class="done" type="button" @click=${this.done}>Done</button>` : nothing}
        ${view.payable
          ? html`<section aria-labelledby="pay-title">
              <h2 id="pay-title">Pay with your ANM wallet</h2>
              ${view.status === 'AWAITING_PAYMENT' ? html`<anm-countdown .expires=${view.expires_at}></anm-countdown>` : nothing}
              <anm-qr .value=${i.payment_uri} label="QR code of the payment request: scan it with your ANM wallet"></anm-qr>
              <a class="wallet-link" href=${i.payment_uri}>Open in my wallet app</a>
              <anm-copy-field
                label="Total in ANM"
                field="total"
                .value=${i.anm_amount_decimal}
                hint="For a wallet that takes an amount in ANM: the two outputs below add up to this."
                ?copied=${local.copied === 'total'}
                ?failed=${local.copyFailed === 'total'}
              ></anm-copy-field>
              <anm-copy-field
                label="Payment URI"
                field="uri"
                .value=${i.payment_uri}
                ?copied=${local.copied === 'uri'}
                ?failed=${local.copyFailed === 'uri'}
              ></anm-copy-field>
            </section>`
          : nothing}
        <details ?open=${this.detailsShouldBeOpen} @toggle=${this.onToggle}>
          <summary>The transaction, output by output</summary>
          <anm-outputs .intent=${i} copied=${local.copied ?? ''} failed=${local.copyFailed ?? ''}></anm-outputs>
        </details>
        <footer>
          ${i.cancel_url && view.payable && !embed ? html`<p><a href=${i.cancel_url}>Cancel and return to ${merchant}</a></p>` : nothing}
          <p>Payment <code>${i.id}</code> · ANM Pay</p>
        </footer>
      </article>
    `;
  }
}

customElements.define('anm-checkout', AnmCheckout);

declare global {
  interface HTMLElementTagNameMap {
    'anm-checkout': AnmCheckout;
  }
  interface HTMLElementEventMap {
    'anm-status-change': CustomEvent<CheckoutStatusView>;
    'anm-done': CustomEvent<undefined>;
  }
}
