/** `<anm-countdown>`: time left until `expires` (ISO 8601), ticking each second while shown. */
import { LitElement, css, html } from 'lit';
import { ClockController } from '../controllers/clock-controller.ts';
import { tokens } from './tokens.ts';

function two(n: number): string {
  return String(n).padStart(2, '0');
}

/** `mm:ss`, or `h:mm:ss` past an hour. */
export function formatRemaining(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  return h > 0 ? `${h}:${two(m)}:${two(s % 60)}` : `${two(m)}:${two(s % 60)}`;
}

export class AnmCountdown extends LitElement {
  static override properties = {
    expires: { type: String },
  };

  static override styles = [
    tokens,
    css`
      :host {
        display: block;
        color: var(--anm-muted);
      }
      .time {
        font-variant-numeric: tabular-nums;
        font-weight: 700;
        color: var(--anm-fg);
      }
    `,
  ];

  declare expires: string;
  private readonly clock = new ClockController(this);

  constructor() {
    super();
    this.expires = '';
  }

  override render() {
    const left = Date.parse(this.expires) - this.clock.now;
    if (!Number.isFinite(left)) return html``;
    const minutes = Math.max(0, Math.ceil(left / 60_000));
    return left > 0
      ? html`<p role="timer" aria-label="Time left to pay: about ${minutes} minute${minutes === 1 ? '' : 's'}">
          Pay within <span class="time" aria-hidden="true">${formatRemaining(left)}</span>
        </p>`
      : html`<p role="status">Time is up: waiting for the service to close this payment request.</p>`;
  }
}

customElements.define('anm-countdown', AnmCountdown);

declare global {
  interface HTMLElementTagNameMap {
    'anm-countdown': AnmCountdown;
  }
}
