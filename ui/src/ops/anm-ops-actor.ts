/**
 * `<anm-ops-actor>`: one actor. Its statechart lit in its current state and moving live (the
 * actor's stream), its journal newest first in pages, its timers and outbox rows, and verify
 * (replay the journal, compare with the stored snapshot). On each live step the first journal
 * page, timers and outbox are read again; older pages stay as they are.
 */
import { LitElement, css, html, nothing } from 'lit';
import { opsFetch } from './api.ts';
import './anm-ops-journal.ts';
import './anm-statechart.ts';
import { StreamController } from './stream-controller.ts';
import { opsStyles, when } from './styles.ts';
import type { ActorPageData, LiveState, VerifyResult } from './types.ts';

export class AnmOpsActor extends LitElement {
  static override styles = [
    ...opsStyles,
    css`
      dl {
        display: grid;
        grid-template-columns: max-content 1fr;
        gap: 2px 16px;
        margin: 0;
      }
      dt {
        color: var(--anm-muted);
      }
      dd {
        margin: 0;
      }
      .verify {
        display: flex;
        gap: 12px;
        align-items: center;
        margin: 12px 0;
        flex-wrap: wrap;
      }
    `,
  ];

  static override properties = {
    data: { attribute: false },
    from: { state: true },
    verifying: { state: true },
    verdict: { state: true },
    failure: { state: true },
  };

  declare data: ActorPageData | undefined;
  declare from: string | null;
  declare verifying: boolean;
  declare verdict: VerifyResult | null;
  declare failure: string | null;
  private readonly stream = new StreamController(this, () => (this.data ? `/ops/streams/actors/${encodeURIComponent(this.data.actor.id)}` : null), {
    state: (d) => this.onState(d as LiveState),
  });

  constructor() {
    super();
    this.data = undefined;
    this.from = null;
    this.verifying = false;
    this.verdict = null;
    this.failure = null;
  }

  private onState(s: LiveState): void {
    const d = this.data;
    if (!d || s.version < d.actor.version) return;
    if (s.version === d.actor.version && s.event === null) return;
    this.from = d.actor.state === s.state ? this.from : d.actor.state;
    this.data = { ...d, actor: { ...d.actor, version: s.version, state: s.state, active: s.active } };
    void this.refresh();
  }

  private async refresh(): Promise<void> {
    const id = this.data?.actor.id;
    if (!id) return;
    const fresh = await opsFetch<Omit<ActorPageData, 'csrf'>>(`/ops/data/actors/${encodeURIComponent(id)}`).catch(() => null);
    if (!fresh || !this.data || fresh.actor.version < this.data.actor.version) return;
    this.data = { ...this.data, ...fresh };
  }

  private async verify(): Promise<void> {
    if (!this.data) return;
    this.verifying = true;
    this.failure = null;
    try {
      this.verdict = await opsFetch<VerifyResult>(`/ops/data/actors/${encodeURIComponent(this.data.actor.id)}/verify`, { method: 'POST', body: {} });
    } catch (err) {
      this.failure = err instanceof Error ? err.message : String(err);
    } finally {
      this.verifying = false;
    }
  }

  private renderVerdict() {
    const v = this.verdict;
    const shown = (x: unknown) => (x === undefined ? '(absent)' : JSON.stringify(x));
    if (this.failure) return html`<span class="badge bad" role="status">${this.failure}</span>`;
    if (!v) return nothing;
    if (v.equal) return html`<span class="badge ok" role="status" data-verdict="equal">Equal: ${v.events} events replayed give the stored snapshot (version ${v.stored_version})</span>`;
    return html`<span class="badge bad" role="status" data-verdict="different"
      >Different${v.error ? `: replay failed: ${v.error}` : v.difference ? ` at ${v.difference.path}: stored ${shown(v.difference.stored)}, replayed ${shown(v.difference.replayed)}` : ''}</span
    >`;
  }

  override render() {
    const d = this.data;
    if (!d) return nothing;
    const a = d.actor;
    return html`<h1 class="mono">${a.id}</h1>
      <dl>
        <dt>Kind</dt><dd>${a.kind} (machine ${a.machine} v${a.machine_version})</dd>
        <dt>State</dt><dd aria-live="polite"><strong data-current-state=${a.state}>${a.state}</strong> <span class="muted">version ${a.version}</span></dd>
        <dt>Merchant</dt><dd class="mono">${a.merchant ?? '—'} ${a.mode ? `(${a.mode})` : ''}</dd>
        <dt>Created</dt><dd>${when(a.created_at)}</dd>
        <dt>Live</dt><dd>${this.stream.live ? html`<span class="badge ok">following</span>` : html`<span class="badge">connecting</span>`}</dd>
      </dl>
      <h2>Statechart</h2>
      <anm-statechart .chart=${d.graph} .active=${a.active} .from=${this.from}></anm-statechart>
      <div class="verify">
        <button type="button" id="verify" ?disabled=${this.verifying} @click=${() => void this.verify()}>${this.verifying ? 'Verifying…' : 'Verify (replay the journal)'}</button>
        ${this.renderVerdict()}
      </div>
      <h2>Journal</h2>
      <anm-ops-journal .actorId=${a.id} .first=${d.journal}></anm-ops-journal>
      <h2>Timers</h2>
      ${d.timers.length === 0
        ? html`<p class="muted">No timers.</p>`
        : html`<table>
            <thead><tr><th>Name</th><th>Event</th><th>Fires at</th><th>Generation</th><th>Fired</th></tr></thead>
            <tbody>${d.timers.map((t) => html`<tr><td>${t.name}</td><td>${t.event_type}</td><td>${when(t.fire_at)}</td><td>${t.generation}</td><td>${when(t.fired_at)}</td></tr>`)}</tbody>
          </table>`}
      <h2>Outbox</h2>
      ${d.outbox.length === 0
        ? html`<p class="muted">No outbox rows retained.</p>`
        : html`<table>
            <thead><tr><th>Message id</th><th>Subject</th><th>Written</th><th>Published</th></tr></thead>
            <tbody>${d.outbox.map((o) => html`<tr><td class="mono">${o.msg_id}</td><td class="mono">${o.subject}</td><td>${when(o.created_at)}</td><td>${when(o.published_at)}</td></tr>`)}</tbody>
          </table>`}`;
  }
}

customElements.define('anm-ops-actor', AnmOpsActor);

declare global {
  interface HTMLElementTagNameMap {
    'anm-ops-actor': AnmOpsActor;
  }
}
