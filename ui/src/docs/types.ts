import type { Options } from 'minisearch';

/** One section of a docs page, as the search index holds it (gateway/docs/search.ts). */
export interface SectionDoc {
  id: string;
  /** Page title. */
  title: string;
  heading: string;
  /** Site URL of the section. */
  url: string;
  /** `guide`, `reference` or `internal`. */
  section: string;
  text: string;
}

/**
 * The body of `/docs/search-index.json`: the MiniSearch index and the options it was built
 * with, which `MiniSearch.loadJS` needs to load it, so the box never drifts from the server.
 */
export interface SearchIndexFile {
  options: Options<SectionDoc>;
  index: ReturnType<import('minisearch').default<SectionDoc>['toJSON']>;
}
