/**
 * The pages of the docs site, read from `docs/` once per process on first use. The user guide
 * is `docs/*.md` and `docs/machines/*.md` in a fixed reading order (anything new goes last);
 * internal notes (ADRs, benchmarks) are pages too, reachable from their own index, but kept
 * out of the guide's navigation. Page names are one URL segment: `webhooks`,
 * `machines-refund`, `adr-0012-optimistic-engine-path`.
 */
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { renderMarkdown, type Rendered } from './markdown.ts';

export const DOCS_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'docs');

export type Section = 'guide' | 'reference' | 'internal';

export interface Page extends Rendered {
  name: string;
  section: Section;
  /** Source file relative to the docs directory (empty for generated pages). */
  file: string;
}

export interface Catalogue {
  pages: Map<string, Page>;
  /** In navigation order. */
  list: Page[];
}

/** The guide's reading order; files not named here follow in name order. */
const GUIDE_ORDER = ['getting-started', 'api', 'api-reference', 'checkout', 'widget', 'payment-links', 'invoices', 'webhooks', 'errors', 'dashboard', 'pos', 'shop', 'chain', 'devnet', 'marketplace', 'deploy', 'observability', 'engine'];
const INTERNAL = new Set(['benchmarks']);

/** A generated page (the API reference) joins the catalogue as Markdown, rendered like the rest. */
export interface ExtraPage {
  name: string;
  section: Section;
  markdown: string;
}

function pageName(rel: string): string {
  const noExt = rel.replace(/\.md$/, '');
  return noExt.split('/').join('-');
}

function sectionOf(rel: string): Section {
  if (rel.startsWith('adr/')) return 'internal';
  if (rel.startsWith('machines/')) return 'reference';
  return INTERNAL.has(pageName(rel)) ? 'internal' : 'guide';
}

async function markdownFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (!e.isFile() || !e.name.endsWith('.md')) continue;
    const parent = (e as { parentPath?: string; path?: string }).parentPath ?? (e as { path?: string }).path ?? dir;
    out.push(path.relative(dir, path.join(parent, e.name)).split(path.sep).join('/'));
  }
  return out.sort();
}

/** Where a link written in `fromRel` points on the site, or null when it is no page. */
function resolver(fromRel: string, names: Set<string>): (href: string) => string | null {
  return (href) => {
    const [target = '', frag] = href.split('#', 2);
    const hash = frag ? `#${frag}` : '';
    if (target === '') return hash || null;
    const rel = path.posix.normalize(path.posix.join(path.posix.dirname(fromRel), target));
    if (rel === 'adr' || rel === 'adr/') return '/docs/internal';
    if (rel === '.' || rel === './') return '/docs';
    if (rel.startsWith('../')) return null;
    const name = pageName(rel.replace(/\/$/, ''));
    if (rel.endsWith('.md') && names.has(name)) return `/docs/${name}${hash}`;
    // A generated page linked by its name (`api-reference`) or a folder that has a page.
    if (names.has(name)) return `/docs/${name}${hash}`;
    return null;
  };
}

function navOrder(a: Page, b: Page): number {
  const rank = (p: Page) => {
    const i = GUIDE_ORDER.indexOf(p.name);
    return i < 0 ? GUIDE_ORDER.length : i;
  };
  return rank(a) - rank(b) || a.name.localeCompare(b.name);
}

export async function loadCatalogue(dir: string, extra: ExtraPage[] = []): Promise<Catalogue> {
  const files = await markdownFiles(dir);
  const names = new Set([...files.map(pageName), ...extra.map((e) => e.name), 'internal']);
  const pages: Page[] = [];
  for (const rel of files) {
    const source = await readFile(path.join(dir, rel), 'utf8');
    const name = pageName(rel);
    pages.push({ ...renderMarkdown(source, resolver(rel, names), name), name, section: sectionOf(rel), file: rel });
  }
  const notes = pages.filter((p) => p.section === 'internal');
  const index = ['# Internal notes', '', 'Design decisions (ADRs) and benchmark figures, kept for contributors; the user guide does not depend on them.', ''];
  for (const p of notes) index.push(`- [${p.title.replace(/[[\]]/g, '')}](${p.name}.md)`);
  extra = [...extra, { name: 'internal', section: 'internal', markdown: index.join('\n') }];
  for (const e of extra) pages.push({ ...renderMarkdown(e.markdown, resolver(`${e.name}.md`, names), e.name), name: e.name, section: e.section, file: '' });
  pages.sort(navOrder);
  return { pages: new Map(pages.map((p) => [p.name, p])), list: pages };
}
