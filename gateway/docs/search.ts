/**
 * Docs search with MiniSearch: one document per page section (a page's second-level heading
 * and its text), so a query lands on the recipe, not only on its page. The same index serves
 * `/docs/search?q=` (rendered on the server) and `/docs/search-index.json` (the client search
 * box loads it with `MiniSearch.loadJS` and the options that come with it).
 */
import MiniSearch from 'minisearch';
import type { Options } from 'minisearch';
import type { SearchIndexFile, SectionDoc } from '../../ui/src/docs/types.ts';
import type { Catalogue } from './catalogue.ts';

export type Hit = Pick<SectionDoc, 'title' | 'heading' | 'url' | 'section'> & { score: number };

export const SEARCH_OPTIONS: Options<SectionDoc> = {
  fields: ['title', 'heading', 'text'],
  storeFields: ['title', 'heading', 'url', 'section'],
  searchOptions: { boost: { title: 3, heading: 2 }, prefix: true, fuzzy: 0.15, combineWith: 'AND' },
};

export interface DocsSearch {
  search(q: string, limit?: number): Hit[];
  /** The serialised index for `/docs/search-index.json`. */
  json: string;
}

export function buildSearch(cat: Catalogue): DocsSearch {
  const ms = new MiniSearch<SectionDoc>(SEARCH_OPTIONS);
  const docs: SectionDoc[] = [];
  for (const p of cat.list) {
    for (const s of p.sections) {
      docs.push({
        id: `${p.name}#${s.anchor}`,
        title: p.title,
        heading: s.heading,
        url: s.anchor ? `/docs/${p.name}#${s.anchor}` : `/docs/${p.name}`,
        section: p.section,
        text: s.text,
      });
    }
  }
  ms.addAll(docs);
  return {
    json: JSON.stringify({ options: SEARCH_OPTIONS, index: ms.toJSON() } satisfies SearchIndexFile),
    search(q, limit = 20) {
      const query = q.trim().slice(0, 200);
      if (!query) return [];
      let hits = ms.search(query);
      // Every word must match first; when nothing does, any word will do.
      if (hits.length === 0) hits = ms.search(query, { combineWith: 'OR' });
      return hits.slice(0, limit).map((h) => ({ title: String(h.title), heading: String(h.heading), url: String(h.url), section: String(h.section), score: h.score }));
    },
  };
}
