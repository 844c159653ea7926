/** `<anm-qr>`: a QR code of `value` as one SVG path (no canvas, no image, nothing inline for CSP). */
import { LitElement, css, html, nothing } from 'lit';
import qrcode from 'qrcode-generator';
import { tokens } from './tokens.ts';

const QUIET = 4;

/** Dark modules as a path of unit squares, row runs merged. */
function modulesPath(value: string): { size: number; d: string } {
  const qr = qrcode(0, 'M');
  qr.addData(value, 'Byte');
  qr.make();
  const n = qr.getModuleCount();
  let d = '';
  for (let r = 0; r < n; r++) {
    let c = 0;
    while (c < n) {
      if (!qr.isDark(r, c)) {
        c++;
        continue;
      }
      const start = c;
      while (c < n && qr.isDark(r, c)) c++;
      d += `M${start + QUIET} ${r + QUIET}h${c - start}v1h${start - c}z`;
    }
  }
  return { size: n + 2 * QUIET, d };
}

export class AnmQr extends LitElement {
  static override properties = {
    value: { type: String },
    label: { type: String },
  };

  static override styles = [
    tokens,
    css`
      :host {
        display: block;
        max-width: 280px;
        margin: 0 auto;
      }
      svg {
        display: block;
        width: 100%;
        height: auto;
        background: #fff;
        border: 1px solid var(--anm-border);
        border-radius: 8px;
      }
    `,
  ];

  declare value: string;
  declare label: string;
  private cache: { value: string; size: number; d: string } | undefined;

  constructor() {
    super();
    this.value = '';
    this.label = 'QR code';
  }

  override render() {
    if (!this.value) return nothing;
    if (this.cache?.value !== this.value) this.cache = { value: this.value, ...modulesPath(this.value) };
    const { size, d } = this.cache;
    // An html template: the parser puts <svg> and its children in the SVG namespace.
    return html`<svg role="img" aria-label=${this.label} viewBox="0 0 ${size} ${size}" shape-rendering="crispEdges" xmlns="http://www.w3.org/2000/svg">
      <rect width=${size} height=${size} fill="#ffffff"></rect>
      <path d=${d} fill="#000000"></path>
    </svg>`;
  }
}

customElements.define('anm-qr', AnmQr);

declare global {
  interface HTMLElementTagNameMap {
    'anm-qr': AnmQr;
  }
}
