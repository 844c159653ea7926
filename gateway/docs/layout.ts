/**
 * HTML of the docs site: one shell (navigation of the user guide, the search form that
 * `<anm-docs-search>` upgrades, the page), the search results page and the 404 page that
 * lists every page. Page bodies arrive already sanitised (markdown.ts); every other
 * interpolated string goes through `esc`.
 */
import { esc } from '../checkout/html.ts';
import type { Catalogue, Page } from './catalogue.ts';
import type { Hit } from './search.ts';

export interface DocsAssets {
  js: string;
  css: string;
  icon: string;
}

function nav(cat: Catalogue, current: string | null): string {
  const item = (p: Page) => `<li><a href="/docs/${esc(p.name)}"${p.name === current ? ' aria-current="page"' : ''}>${esc(p.title)}</a></li>`;
  const guide = cat.list.filter((p) => p.section === 'guide').map(item).join('');
  const reference = cat.list.filter((p) => p.section === 'reference').map(item).join('');
  return `<nav class="docs-nav" aria-label="Documentation">
<p class="nav-head"><a href="/docs">ANM Pay docs</a></p>
<h2>Guide</h2><ul>${guide}</ul>
${reference ? `<h2>State machines</h2><ul>${reference}</ul>` : ''}
<p class="nav-foot"><a href="/docs/internal"${current === 'internal' ? ' aria-current="page"' : ''}>Internal notes (ADRs, benchmarks)</a></p>
</nav>`;
}

function searchForm(q: string): string {
  // Works without script (a GET to /docs/search); docs.js upgrades it to search as you type.
  return `<anm-docs-search><form class="docs-search" role="search" method="get" action="/docs/search">
<label for="docs-q">Search the docs</label>
<input id="docs-q" name="q" type="search" value="${esc(q)}" autocomplete="off" maxlength="200">
<button type="submit">Search</button>
</form></anm-docs-search>`;
}

export function shell(cat: Catalogue, a: DocsAssets, o: { title: string; current: string | null; q?: string; main: string }): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(o.title)} · ANM Pay docs</title>
<link rel="icon" href="${esc(a.icon)}" type="image/svg+xml">
<link rel="stylesheet" href="${esc(a.css)}">
<script type="module" src="${esc(a.js)}"></script>
</head>
<body class="docs">
<header class="docs-top"><a class="brand" href="/">ANM Pay</a>${searchForm(o.q ?? '')}</header>
<div class="docs-body">
${nav(cat, o.current)}
<main id="content">
${o.main}
</main>
</div>
</body>
</html>
`;
}

export function pageHtml(cat: Catalogue, a: DocsAssets, p: Page): string {
  const note = p.section === 'internal' && p.name !== 'internal' ? '<p class="note">An internal note for contributors, not part of the user guide.</p>' : '';
  return shell(cat, a, { title: p.title, current: p.name, main: `${note}<article>${p.html}</article>` });
}

export function indexHtml(cat: Catalogue, a: DocsAssets): string {
  const cards = cat.list
    .filter((p) => p.section === 'guide')
    .map((p) => `<li><a href="/docs/${esc(p.name)}">${esc(p.title)}</a></li>`)
    .join('');
  const main = `<h1>ANM Pay documentation</h1>
<p>Accept ANM payments with a hosted checkout, webhooks and a REST API; sell pay-per-call APIs through the x402 marketplace. New here? Start with <a href="/docs/getting-started">Getting started</a>.</p>
<ul class="page-list">${cards}</ul>
<p>Reference: <a href="/docs/api-reference">API reference</a> (generated from the OpenAPI document), <a href="/docs/errors">error codes</a>. Contributors: <a href="/docs/internal">internal notes</a>.</p>`;
  return shell(cat, a, { title: 'Documentation', current: null, main });
}

export function resultsHtml(cat: Catalogue, a: DocsAssets, q: string, hits: Hit[]): string {
  const list = hits
    .map((h) => `<li><a href="${esc(h.url)}">${esc(h.heading ? `${h.title}: ${h.heading}` : h.title)}</a>${h.section === 'internal' ? ' <span class="tag">internal note</span>' : ''}</li>`)
    .join('');
  const main = q.trim()
    ? `<h1>Search results for “${esc(q.trim())}”</h1>${hits.length ? `<ol class="results">${list}</ol>` : '<p>No page matches. Try fewer or other words.</p>'}`
    : '<h1>Search the docs</h1><p>Type a few words in the search box above.</p>';
  return shell(cat, a, { title: 'Search', current: null, q, main });
}

export function notFoundHtml(cat: Catalogue, a: DocsAssets, name: string): string {
  const all = cat.list.map((p) => `<li><a href="/docs/${esc(p.name)}">${esc(p.title)}</a> <code>${esc(p.name)}</code></li>`).join('');
  const main = `<h1>No page “${esc(name)}”</h1>
<p>These are the pages of the docs:</p>
<ul class="page-list all-pages">${all}</ul>`;
  return shell(cat, a, { title: 'Page not found', current: null, main });
}
