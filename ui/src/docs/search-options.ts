/**
 * MiniSearch options of the docs index, shared by the server that builds it
 * (gateway/docs/search.ts) and the search box that loads it: `loadJSON` needs the same ones.
 */
import type { Options } from 'minisearch';

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

export const SEARCH_OPTIONS: Options<SectionDoc> = {
  fields: ['title', 'heading', 'text'],
  storeFields: ['title', 'heading', 'url', 'section'],
  searchOptions: { boost: { title: 3, heading: 2 }, prefix: true, fuzzy: 0.15, combineWith: 'AND' },
};
