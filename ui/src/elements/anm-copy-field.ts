/**
 * `<anm-copy-field>`: a labelled value with a Copy button. The button only sends an
 * `anm-copy` event ({field, value}); the page does the copying and tells it `copied`.
 */
import { LitElement, css, html, nothing } from 'lit';
import { tokens } from './tokens.ts';

export interface CopyRequest {
  field: string;
  value: string;
  /** The element holding the value, selected when the clipboard is not available. */
  target: HTMLElement;
}

export class AnmCopyField extends LitElement {
  static override properties = {
    label: { type: String },
    value: { type: String },
    field: { type: String },
    hint: { type: String },
    copied: { type: Boolean },
    failed: { type: Boolean },
  };

  static override styles = [
    tokens,
    css`
      :host {
        display: block;
        margin: 10px 0;
      }
      .label {
        display: block;
        font-size: 0.85rem;
        color: var(--anm-muted);
        margin-bottom: 4px;
      }
      .row {
        display: flex;
        gap: 8px;
        align-items: flex-start;
      }
      .value {
        flex: 1;
        min-width: 0;
        margin: 0;
        padding: 10px 12px;
        background: var(--anm-surface);
        border: 1px solid var(--anm-border);
        border-radius: 8px;
        user-select: all;
      }
      .status {
        font-size: 0.85rem;
        min-height: 1.2em;
        margin: 4px 0 0;
        color: var(--anm-success);
      }
      .status.failed {
        color: var(--anm-warn);
      }
      .hint {
        font-size: 0.85rem;
        color: var(--anm-muted);
        margin: 4px 0 0;
      }
    `,
  ];

  declare label: string;
  declare value: string;
  declare field: string;
  declare hint: string;
  declare copied: boolean;
  declare failed: boolean;

  constructor() {
    super();
    this.label = '';
    this.value = '';
    this.field = '';
    this.hint = '';
    this.copied = false;
    this.failed = false;
  }

  private readonly requestCopy = (): void => {
    const target = this.renderRoot.querySelector<HTMLElement>('.value');
    if (!target) return;
    const detail: CopyRequest = { field: this.field, value: this.value, target };
    this.dispatchEvent(new CustomEvent<CopyRequest>('anm-copy', { detail, bubbles: true, composed: true }));
  };

  override render() {
    return html`
      <span class="label" id="label">${this.label}</span>
      <div class="row">
        <code class="value" id="value" aria-labelledby="label" tabindex="0">${this.value}</code>
        <button type="button" aria-label="Copy ${this.label}" @click=${this.requestCopy}>Copy</button>
      </div>
      ${this.hint ? html`<p class="hint">${this.hint}</p>` : nothing}
      <p class="status ${this.failed ? 'failed' : ''}" role="status" aria-live="polite">
        ${this.copied ? 'Copied to the clipboard.' : this.failed ? 'Copying is blocked here: the value is selected, copy it by hand.' : ''}
      </p>
    `;
  }
}

customElements.define('anm-copy-field', AnmCopyField);

declare global {
  interface HTMLElementTagNameMap {
    'anm-copy-field': AnmCopyField;
  }
  interface HTMLElementEventMap {
    'anm-copy': CustomEvent<CopyRequest>;
  }
}
