/**
 * `<anm-ops-overview>`: actors by kind and state, the latest transitions, outbox and timer
 * backlogs with their lag, failing webhook endpoints, and each indexer's head and lag. Live:
 * the overview stream sends the whole overview when it changes and each commit as it happens.
 */
import { LitElement, html, nothing } from 'lit';
import { StreamController } from './stream-controller.ts';
import { lag, opsStyles, when } from './styles.ts';
import type { Overview, TransitionItem } from './types.ts';

const RECENT = 20;

export class AnmOpsOverview extends LitElement {
  static override styles = opsStyles;
  static override properties = { overview: { attribute: false }, live: { state: true } };

  declare overview: Overview | undefined;
  /** Commits seen on the stream since the last overview, newest first. */
  declare live: TransitionItem[];
  private readonly stream = new StreamController(this, () => '/ops/streams/overview', {
    overview: (o) => {
      this.overview = o as Overview;
      this.live = [];
    },
    transition: (t) => (this.live = [t as TransitionItem, ...this.live].slice(0, RECENT)),
  });

  constructor() {
    super();
    this.overview = undefined;
    this.live = [];
  }

  private kinds() {
    const o = this.overview!;
    const byKind = new Map<string, Array<{ state: string; count: number }>>();
    for (const r of o.actors) byKind.set(r.kind, [...(byKind.get(r.kind) ?? []), r]);
    return html`<div class="cards">
      ${[...byKind].map(
        ([kind, rows]) => html`<div class="card" data-kind=${kind}>
          <div><a href=${`/ops/actors?kind=${encodeURIComponent(kind)}`}>${kind}</a></div>
          <div class="n">${rows.reduce((n, r) => n + r.count, 0)}</div>
          ${rows.map((r) => html`<div><a href=${`/ops/actors?kind=${encodeURIComponent(kind)}&state=${encodeURIComponent(r.state)}`}>${r.state}</a> <span data-count=${`${kind}:${r.state}`}>${r.count}</span></div>`)}
        </div>`,
      )}
      ${byKind.size === 0 ? html`<p class="muted">No actors yet.</p>` : nothing}
    </div>`;
  }

  override render() {
    const o = this.overview;
    if (!o) return nothing;
    const link = (id: string) => html`<a class="mono" href=${`/ops/actors/${encodeURIComponent(id)}`}>${id}</a>`;
    return html`<h1>Overview <span class="badge ${this.stream.live ? 'ok' : ''}">${this.stream.live ? 'live' : 'connecting'}</span></h1>
      <p class="muted">As of ${when(o.at)}</p>
      <h2>Actors by kind and state</h2>
      ${this.kinds()}
      <h2>Backlogs</h2>
      <div class="cards">
        <div class="card"><div>Outbox pending</div><div class="n" id="outbox-pending">${o.outbox.pending}</div><div class="muted">oldest ${lag(o.outbox.oldest_lag_ms)}</div></div>
        <div class="card"><div>Timers due</div><div class="n">${o.timers.due}</div><div class="muted">${o.timers.pending} set; oldest due ${lag(o.timers.oldest_due_lag_ms)}</div></div>
      </div>
      <h2>Indexers</h2>
      <table>
        <thead><tr><th>Network</th><th>Indexed head</th><th>Node head</th><th>Lag (blocks)</th><th>Updated</th></tr></thead>
        <tbody>${o.indexers.map((i) => html`<tr><td>${i.network}</td><td>${i.height}</td><td>${i.node_height ?? '—'}</td><td>${i.lag_blocks ?? '—'}</td><td>${when(i.updated_at)}</td></tr>`)}</tbody>
      </table>
      <h2>Failing webhook endpoints</h2>
      ${o.webhooks.length === 0
        ? html`<p class="muted">None.</p>`
        : html`<table>
            <thead><tr><th>Endpoint</th><th>Merchant</th><th>URL</th><th>Status</th><th>Failing deliveries</th><th>Last error</th></tr></thead>
            <tbody>${o.webhooks.map((w) => html`<tr><td class="mono">${w.endpoint}</td><td class="mono">${w.merchant} (${w.mode})</td><td class="mono">${w.url}</td><td>${w.status}</td><td>${w.failing}</td><td>${w.last_status ?? ''} ${w.last_error ?? ''}</td></tr>`)}</tbody>
          </table>`}
      <h2>Recent transitions</h2>
      <table id="recent">
        <thead><tr><th>Actor</th><th>Kind</th><th>Event</th><th>State</th><th>Version</th></tr></thead>
        <tbody>
          ${this.live.map((t) => html`<tr class="live"><td>${link(t.actor_id)}</td><td>${t.kind}</td><td><code>${t.event}</code></td><td><strong>${t.state}</strong></td><td>${t.version}</td></tr>`)}
          ${o.recent.map((r) => html`<tr><td>${link(r.actor_id)}</td><td>${r.kind}</td><td><code>${r.type}</code></td><td>${r.state_before ?? '∅'} → <strong>${r.state_after}</strong></td><td>${r.seq}</td></tr>`)}
        </tbody>
      </table>`;
  }
}

customElements.define('anm-ops-overview', AnmOpsOverview);

declare global {
  interface HTMLElementTagNameMap {
    'anm-ops-overview': AnmOpsOverview;
  }
}
