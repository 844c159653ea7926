/**
 * `<anm-docs-search>`: the docs search box. It wraps the server-rendered search form (which
 * works without script: a GET to /docs/search) and, once the reader types, loads the prebuilt
 * MiniSearch index from /docs/search-index.json and lists matching sections as they type.
 * Enter still submits the form to the full results page.
 */
import { css, html, LitElement, nothing } from 'lit';
import MiniSearch from 'minisearch';
import type { SearchIndexFile, SectionDoc } from './types.ts';

interface Hit {
  title: string;
  heading: string;
  url: string;
  section: string;
}

const MAX_HITS = 8;

export class AnmDocsSearch extends LitElement {
  static override styles = css`
    :host {
      display: block;
      position: relative;
    }
    .panel {
      position: absolute;
      z-index: 10;
      top: 100%;
      left: 0;
      right: 0;
      margin: 4px 0 0;
      padding: 4px 0;
      list-style: none;
      background: #ffffff;
      border: 1px solid #c9ccd6;
      border-radius: 8px;
      box-shadow: 0 6px 20px rgba(0, 0, 0, 0.12);
      min-width: 280px;
    }
    a {
      display: block;
      padding: 6px 12px;
      color: #0b57d0;
      text-decoration: none;
    }
    a:hover,
    a:focus-visible {
      background: #e8f0fe;
      outline: none;
    }
    .heading {
      display: block;
      color: #4a4a55;
      font-size: 0.9em;
    }
    .empty {
      padding: 6px 12px;
      color: #4a4a55;
    }
  `;

  static override properties = {
    hits: { state: true },
    query: { state: true },
  };

  declare hits: Hit[];
  declare query: string;
  private index: Promise<MiniSearch<SectionDoc>> | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private readonly onInput = (e: Event) => {
    const value = (e.target as HTMLInputElement).value;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.run(value), 80);
  };

  constructor() {
    super();
    this.hits = [];
    this.query = '';
  }

  override connectedCallback(): void {
    super.connectedCallback();
    this.addEventListener('input', this.onInput);
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    this.removeEventListener('input', this.onInput);
    clearTimeout(this.timer);
  }

  private load(): Promise<MiniSearch<SectionDoc>> {
    this.index ??= fetch('/docs/search-index.json', { headers: { accept: 'application/json' } })
      .then((r) => {
        if (!r.ok) throw new Error(`search index: HTTP ${r.status}`);
        return r.json() as Promise<SearchIndexFile>;
      })
      .then((file) => MiniSearch.loadJS<SectionDoc>(file.index, file.options))
      .catch((err: unknown) => {
        // Try again on the next keystroke; the form still works meanwhile.
        this.index = undefined;
        throw err;
      });
    return this.index;
  }

  private async run(q: string): Promise<void> {
    this.query = q.trim();
    if (!this.query) {
      this.hits = [];
      return;
    }
    const ms = await this.load();
    let found = ms.search(this.query);
    if (found.length === 0) found = ms.search(this.query, { combineWith: 'OR' });
    this.hits = found.slice(0, MAX_HITS).map((h) => ({ title: String(h.title), heading: String(h.heading), url: String(h.url), section: String(h.section) }));
  }

  override render() {
    const panel = this.query
      ? html`<ul class="panel" part="results" aria-live="polite">
          ${this.hits.length === 0
            ? html`<li class="empty">No matching page</li>`
            : this.hits.map((h) => html`<li><a href=${h.url}>${h.title}${h.heading ? html`<span class="heading">${h.heading}</span>` : nothing}</a></li>`)}
        </ul>`
      : nothing;
    return html`<slot></slot>${panel}`;
  }
}

customElements.define('anm-docs-search', AnmDocsSearch);

declare global {
  interface HTMLElementTagNameMap {
    'anm-docs-search': AnmDocsSearch;
  }
}
