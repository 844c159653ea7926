/**
 * `<anm-ops-journal>`: an actor's journal, newest first, one page at a time (keyset pages by
 * seq, so any page of a long journal costs one short read). While the newest page is shown it
 * follows `first`, which the actor page refreshes on every live step.
 */
import { LitElement, html, nothing } from 'lit';
import { opsFetch } from './api.ts';
import { opsStyles, when } from './styles.ts';
import type { JournalEntry, Page } from './types.ts';

export class AnmOpsJournal extends LitElement {
  static override styles = opsStyles;

  static override properties = {
    actorId: { attribute: false },
    first: { attribute: false },
    older: { state: true },
    loading: { state: true },
  };

  declare actorId: string;
  declare first: Page<JournalEntry> | undefined;
  /** Pages after the first, when the operator went back in time; empty on the newest page. */
  declare older: Array<Page<JournalEntry>>;
  declare loading: boolean;

  constructor() {
    super();
    this.actorId = '';
    this.first = undefined;
    this.older = [];
    this.loading = false;
  }

  private get shown(): Page<JournalEntry> | undefined {
    return this.older.at(-1) ?? this.first;
  }

  private async next(): Promise<void> {
    const cursor = this.shown?.next;
    if (!cursor) return;
    this.loading = true;
    try {
      const page = await opsFetch<Page<JournalEntry>>(`/ops/data/actors/${encodeURIComponent(this.actorId)}/journal?before=${encodeURIComponent(cursor)}&limit=50`);
      this.older = [...this.older, page];
    } finally {
      this.loading = false;
    }
  }

  private effects(e: JournalEntry) {
    const parts = [...e.outbox.map((o) => html`<div class="mono">outbox ${o.subject}</div>`), ...e.timers.map((t) => html`<div class="mono">timer ${t.name} at ${when(t.fire_at)}</div>`)];
    return parts.length ? parts : html`<span class="muted">—</span>`;
  }

  override render() {
    const p = this.shown;
    if (!p) return nothing;
    return html`<table id="journal">
        <thead><tr><th>#</th><th>Event</th><th>Before → after</th><th>At</th><th>Effects written</th></tr></thead>
        <tbody>
          ${p.rows.map(
            (e) => html`<tr data-seq=${e.seq}>
              <td>${e.seq}</td>
              <td><code title=${JSON.stringify(e.event)}>${e.type}</code></td>
              <td>${e.state_before ?? '∅'} → <strong>${e.state_after}</strong></td>
              <td>${when(e.at)}</td>
              <td>${this.effects(e)}</td>
            </tr>`,
          )}
        </tbody>
      </table>
      <p>
        ${this.older.length > 0 ? html`<button type="button" class="secondary" @click=${() => (this.older = [])}>Newest</button>` : nothing}
        ${p.next ? html`<button type="button" class="secondary" id="older" ?disabled=${this.loading} @click=${() => void this.next()}>Older</button>` : html`<span class="muted">Start of the journal.</span>`}
      </p>`;
  }
}

customElements.define('anm-ops-journal', AnmOpsJournal);

declare global {
  interface HTMLElementTagNameMap {
    'anm-ops-journal': AnmOpsJournal;
  }
}
