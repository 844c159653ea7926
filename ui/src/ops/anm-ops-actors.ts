/**
 * `<anm-ops-actors>`: the actor list, filtered by kind, state, merchant and id prefix, in
 * pages by id. The filter lives in the address (`/ops/actors?kind=…`), so a view can be shared.
 */
import { LitElement, html, nothing } from 'lit';
import { opsFetch } from './api.ts';
import { opsStyles, when } from './styles.ts';
import type { ActorSummary, Page } from './types.ts';

export interface ActorFilter {
  kind?: string;
  state?: string;
  merchant?: string;
  prefix?: string;
}

export class AnmOpsActors extends LitElement {
  static override styles = opsStyles;
  static override properties = { kinds: { attribute: false }, filter: { attribute: false }, pages: { state: true }, loading: { state: true } };

  declare kinds: string[];
  declare filter: ActorFilter;
  declare pages: Array<Page<ActorSummary>>;
  declare loading: boolean;

  constructor() {
    super();
    this.kinds = [];
    this.filter = {};
    this.pages = [];
    this.loading = false;
  }

  private query(after?: string): string {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(this.filter)) if (typeof v === 'string' && v !== '') q.set(k, v);
    if (after) q.set('after', after);
    return q.toString();
  }

  private async load(after?: string): Promise<void> {
    this.loading = true;
    try {
      const page = await opsFetch<Page<ActorSummary>>(`/ops/data/actors?${this.query(after)}`);
      this.pages = after ? [...this.pages, page] : [page];
    } finally {
      this.loading = false;
    }
  }

  private submit(e: SubmitEvent): void {
    e.preventDefault();
    const form = new FormData(e.target as HTMLFormElement);
    const get = (k: string) => {
      const v = form.get(k);
      return typeof v === 'string' ? v.trim() : '';
    };
    this.filter = { kind: get('kind'), state: get('state'), merchant: get('merchant'), prefix: get('prefix') };
    history.replaceState(null, '', `/ops/actors?${this.query()}`);
    void this.load();
  }

  override render() {
    const f = this.filter;
    const rows = this.pages.flatMap((p) => p.rows);
    const next = this.pages.at(-1)?.next;
    return html`<h1>Actors</h1>
      <form @submit=${(e: SubmitEvent) => this.submit(e)}>
        <label>Kind <select name="kind"><option value="">any</option>${this.kinds.map((k) => html`<option ?selected=${f.kind === k}>${k}</option>`)}</select></label>
        <label>State <input name="state" .value=${f.state ?? ''} size="14"></label>
        <label>Merchant <input name="merchant" .value=${f.merchant ?? ''} size="20"></label>
        <label>Id starts with <input name="prefix" .value=${f.prefix ?? ''} size="20"></label>
        <button type="submit">Filter</button>
      </form>
      <table id="actors">
        <thead><tr><th>Id</th><th>Kind</th><th>State</th><th>Merchant</th><th>Version</th><th>Updated</th></tr></thead>
        <tbody>
          ${rows.map((a) => html`<tr><td><a class="mono" href=${`/ops/actors/${encodeURIComponent(a.id)}`}>${a.id}</a></td><td>${a.kind}</td><td>${a.state}</td><td class="mono">${a.merchant ?? '—'} ${a.mode ?? ''}</td><td>${a.version}</td><td>${when(a.updated_at)}</td></tr>`)}
        </tbody>
      </table>
      ${rows.length === 0 ? html`<p class="muted">No actors match.</p>` : nothing}
      ${next ? html`<p><button type="button" class="secondary" ?disabled=${this.loading} @click=${() => void this.load(next)}>Next page</button></p>` : nothing}`;
  }
}

customElements.define('anm-ops-actors', AnmOpsActors);

declare global {
  interface HTMLElementTagNameMap {
    'anm-ops-actors': AnmOpsActors;
  }
}
