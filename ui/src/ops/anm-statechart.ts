/**
 * `<anm-statechart>`: a machine's statechart as SVG, from the layout the server made with ELK
 * (boxes and polylines in one coordinate space), with the states the actor is in lit and the
 * arrow of the last step marked. Drawing only: which states are active comes from the server.
 */
import { LitElement, css, html, nothing, svg } from 'lit';
import { tokens } from '../elements/tokens.ts';
import type { Chart, ChartEdge, ChartState } from './types.ts';

const path = (pts: ChartEdge['points']) => pts.map((p, i) => `${i === 0 ? 'M' : 'L'}${p.x},${p.y}`).join(' ');

export class AnmStatechart extends LitElement {
  static override styles = [
    tokens,
    css`
      :host {
        display: block;
      }
      .frame {
        overflow: auto;
        border: 1px solid var(--anm-border);
        border-radius: var(--anm-radius);
        background: #fff;
        max-height: 70vh;
      }
      .bar {
        display: flex;
        gap: 12px;
        align-items: center;
        margin-bottom: 6px;
        font-size: 13px;
      }
      svg {
        display: block;
        font-family: system-ui, sans-serif;
      }
      .state rect {
        fill: #fff;
        stroke: #6b6f7b;
        stroke-width: 1.2;
      }
      .state.compound > rect {
        fill: #f7f8fb;
      }
      .state text {
        font-size: 12px;
        fill: #1b1b1f;
      }
      .state.final rect {
        stroke-width: 3;
        stroke: #6b6f7b;
      }
      .state.active > rect {
        fill: #fff4c2;
        stroke: #b8860b;
        stroke-width: 3;
      }
      .state.active text {
        font-weight: 700;
      }
      .edge path {
        fill: none;
        stroke: #8a8f9c;
        stroke-width: 1.1;
      }
      .edge text {
        font-size: 11px;
        fill: #3c3f48;
      }
      .edge.last path {
        stroke: #b8860b;
        stroke-width: 2.5;
      }
      .edge:hover path {
        stroke: var(--anm-accent);
        stroke-width: 2.5;
      }
      .initial {
        fill: #1b1b1f;
      }
    `,
  ];

  static override properties = {
    chart: { attribute: false },
    active: { attribute: false },
    from: { attribute: false },
    fit: { state: true },
  };

  declare chart: Chart | null;
  declare active: string[];
  /** The state the last step came from, to mark its arrow. */
  declare from: string | null;
  declare fit: boolean;

  constructor() {
    super();
    this.chart = null;
    this.active = [];
    this.from = null;
    this.fit = false;
  }

  /** At actual size the chart is wider than the page: keep the current state in the middle of the frame. */
  override updated(changed: Map<string, unknown>): void {
    if (this.fit || !(changed.has('active') || changed.has('fit') || changed.has('chart'))) return;
    const frame = this.renderRoot.querySelector<HTMLElement>('.frame');
    const id = this.active.at(-1);
    const s = this.chart?.states.find((x) => x.id === id);
    if (!frame || !s) return;
    frame.scrollTo({ left: Math.max(0, s.x + s.width / 2 - frame.clientWidth / 2), top: Math.max(0, s.y + s.height / 2 - frame.clientHeight / 2), behavior: changed.has('chart') ? 'instant' : 'smooth' });
  }

  private drawState(s: ChartState) {
    const on = this.active.includes(s.id);
    const cls = `state ${s.type}${on ? ' active' : ''}`;
    const internal = s.internal.map((t) => (t.guard ? `${t.event} [${t.guard}]` : t.event)).join('\n');
    const compound = s.type === 'compound' || s.type === 'parallel';
    return svg`<g class=${cls} data-id=${s.id} data-active=${on ? 'true' : 'false'}>
      <title>${s.id}${internal ? `\nhandled here: \n${internal}` : ''}</title>
      <rect x=${s.x} y=${s.y} width=${s.width} height=${s.height} rx="8"></rect>
      <text x=${compound ? s.x + 10 : s.x + s.width / 2} y=${compound ? s.y + 18 : s.y + s.height / 2 + 4} text-anchor=${compound ? 'start' : 'middle'}>${s.key}</text>
      ${s.initial ? svg`<circle class="initial" cx=${s.x - 6} cy=${s.y + 6} r="4"></circle>` : nothing}
    </g>`;
  }

  private drawEdge(e: ChartEdge, last: boolean) {
    const end = e.points.at(-1);
    const prev = e.points.at(-2);
    let head = '';
    if (end && prev) {
      const a = Math.atan2(end.y - prev.y, end.x - prev.x);
      const p = (d: number, t: number) => `${end.x - 9 * Math.cos(a + t) * d},${end.y - 9 * Math.sin(a + t) * d}`;
      head = `M${end.x},${end.y} L${p(1, 0.4)} M${end.x},${end.y} L${p(1, -0.4)}`;
    }
    return svg`<g class=${`edge${last ? ' last' : ''}`} data-source=${e.source} data-target=${e.target}>
      <title>${e.source} → ${e.target}\n${e.on.map((t) => (t.guard ? `${t.event} [${t.guard}]` : t.event)).join('\n')}</title>
      <path d=${`${path(e.points)} ${head}`}></path>
      ${e.label ? e.label.lines.map((l, i) => svg`<text x=${e.label!.x} y=${e.label!.y + 11 + i * 14}>${l}</text>`) : nothing}
    </g>`;
  }

  override render() {
    const c = this.chart;
    if (!c) return html`<p>No statechart for this kind.</p>`;
    const current = this.active.at(-1) ?? null;
    // Compound states first, so their children are drawn on top.
    const states = [...c.states].sort((a, b) => a.id.split('.').length - b.id.split('.').length);
    const w = Math.ceil(c.width);
    const h = Math.ceil(c.height);
    return html`<div class="bar">
        <strong>${c.machineId}</strong><span>machine v${c.version}</span><span>${c.states.length} states, ${c.edges.length} arrows, ${c.events.length} events</span>
        <button type="button" @click=${() => (this.fit = !this.fit)} aria-pressed=${this.fit ? 'true' : 'false'}>${this.fit ? 'Actual size' : 'Fit width'}</button>
      </div>
      <div class="frame">
        <svg role="img" aria-label=${`Statechart of ${c.kind}, current state ${current ?? 'unknown'}`} viewBox=${`0 0 ${w} ${h}`} width=${this.fit ? '100%' : w} height=${this.fit ? nothing : h}>
          ${c.edges.map((e) => this.drawEdge(e, this.from !== null && e.source === this.from && e.target === current))}
          ${states.map((s) => this.drawState(s))}
        </svg>
      </div>`;
  }
}

customElements.define('anm-statechart', AnmStatechart);

declare global {
  interface HTMLElementTagNameMap {
    'anm-statechart': AnmStatechart;
  }
}
