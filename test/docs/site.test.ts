/**
 * The docs site (spec "Routes": `GET /docs`, `/docs/{page}`, `/docs/search`,
 * `/docs/search-index.json`, `/docs/docs.js` — "documentation site; an unknown page is a 404
 * that lists existing pages") and the landing page (DESIGN §6: "`GET /` is a landing page
 * linking the dashboard, docs, operator console and marketplace").
 */
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import MiniSearch from 'minisearch';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SearchIndexFile, SectionDoc } from '../../ui/src/docs/types.ts';
import { docsApp } from './docs-app.ts';

let app: FastifyInstance;
let pages: string[] = [];

const get = (url: string) => app.inject({ method: 'GET', url });

/** Every `/docs/{page}` linked from the 404 page, which lists them all. */
async function allPages(): Promise<string[]> {
  const res = await get('/docs/no-such-page');
  return [...res.body.matchAll(/<li><a href="\/docs\/([^"#]+)">/g)].map((m) => m[1]!);
}

function hrefs(html: string): string[] {
  // Attributes of real tags only: text may hold `src="…"` (a code sample), but never a raw `<`.
  return [...html.matchAll(/<(?:a|link|script|img)\b[^>]*?\s(?:href|src)="([^"]*)"/g)].map((m) => m[1]!.replace(/&amp;/g, '&'));
}

function ids(html: string): Set<string> {
  return new Set([...html.matchAll(/<[a-z0-9]+\b[^>]*?\sid="([^"]*)"/g)].map((m) => m[1]!));
}

beforeAll(async () => {
  app = await docsApp({ marketplaceUrl: 'http://127.0.0.1:3001' });
  pages = await allPages();
}, 60_000);
afterAll(async () => app.close());

describe('docs pages', () => {
  it('lists the user guide, the generated API reference, getting started and the internal notes', () => {
    for (const p of ['getting-started', 'api-reference', 'webhooks', 'errors', 'observability', 'internal', 'adr-0012-optimistic-engine-path', 'benchmarks']) expect(pages).toContain(p);
    expect(pages.length).toBeGreaterThan(30);
  });

  it('renders every page: 200, a title and one h1, with the security headers of checkout', async () => {
    for (const p of ['', ...pages.map((n) => `/${n}`)]) {
      const res = await get(`/docs${p}`);
      expect(res.statusCode, p).toBe(200);
      expect(res.headers['content-type']).toMatch(/^text\/html/);
      expect(res.body).toMatch(/<title>[^<]+ · ANM Pay docs<\/title>/);
      expect(res.body.match(/<h1[\s>]/g)?.length, p).toBe(1);
      const csp = String(res.headers['content-security-policy']);
      expect(csp).toContain("default-src 'none'");
      expect(csp).toContain("script-src 'self'");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      expect(res.headers['x-frame-options']).toBe('DENY');
    }
  });

  it('keeps internal notes out of the guide navigation but links them', async () => {
    const res = await get('/docs/webhooks');
    const nav = res.body.slice(res.body.indexOf('<nav'), res.body.indexOf('</nav>'));
    expect(nav).not.toContain('/docs/adr-');
    expect(nav).not.toContain('/docs/benchmarks');
    expect(nav).toContain('href="/docs/internal"');
    const internal = await get('/docs/internal');
    expect(internal.body).toContain('href="/docs/adr-0012-optimistic-engine-path"');
    expect(internal.body).toContain('href="/docs/benchmarks"');
  });

  it('link checker: every internal link of every page resolves, anchors included', async () => {
    const bodies = new Map<string, string>();
    const fetchOnce = async (u: string) => {
      if (!bodies.has(u)) {
        const res = await get(u);
        expect(res.statusCode, `${u}`).toBe(200);
        bodies.set(u, res.body);
      }
      return bodies.get(u)!;
    };
    let checked = 0;
    for (const p of ['/docs', ...pages.map((n) => `/docs/${n}`)]) {
      const html = await fetchOnce(p);
      for (const href of hrefs(html)) {
        if (/^[a-z]+:/i.test(href)) continue; // another site
        const [target = '', frag] = href.split('#', 2);
        const url = target === '' ? p : target;
        expect(url.startsWith('/'), `${p} links to ${href}`).toBe(true);
        if (url === '/') continue; // the landing page, checked below
        const body = await fetchOnce(url);
        if (frag) expect(ids(body).has(frag), `${p} links to ${href}: no id "${frag}"`).toBe(true);
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(500);
  });

  it('unknown page: 404 HTML listing every page', async () => {
    const res = await get('/docs/nope-<b>');
    expect(res.statusCode).toBe(404);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.body).toContain('No page “nope-&lt;b&gt;”');
    for (const p of pages) expect(res.body).toContain(`href="/docs/${p}"`);
  });

  it('the API reference is generated from the served OpenAPI document', async () => {
    const spec = JSON.parse((await get('/api/v1/openapi.json')).body) as { paths: Record<string, Record<string, unknown>> };
    const ref = (await get('/docs/api-reference')).body;
    for (const [route, item] of Object.entries(spec.paths)) for (const m of Object.keys(item)) expect(ref).toContain(`${m.toUpperCase()} ${route.replace(/&/g, '&amp;')}`);
    expect(ref).toContain('id="schema-paymentintent"');
  });
});

describe('docs search', () => {
  it('/docs/search finds the webhook verification recipe first', async () => {
    const res = await get('/docs/search?q=verify+webhook+signature');
    expect(res.statusCode).toBe(200);
    const first = /<ol class="results"><li><a href="([^"]+)"/.exec(res.body)?.[1];
    expect(first).toBe('/docs/webhooks#verifying-a-delivery');
  });

  it('/docs/search with no match, an empty or a repeated q is a page, never an error', async () => {
    expect((await get('/docs/search?q=zzzqqqxxx')).body).toContain('No page matches');
    expect((await get('/docs/search')).statusCode).toBe(200);
    expect((await get('/docs/search?q=a&q=b')).statusCode).toBe(200);
    const xss = await get('/docs/search?q=%3Cscript%3Ealert(1)%3C/script%3E');
    expect(xss.body).not.toContain('<script>alert');
  });

  it('/docs/search-index.json loads in MiniSearch and finds the recipe', async () => {
    const res = await get('/docs/search-index.json');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    const file = JSON.parse(res.body) as SearchIndexFile;
    const ms = MiniSearch.loadJS<SectionDoc>(file.index, file.options);
    expect(ms.search('verify webhook signature')[0]?.url).toBe('/docs/webhooks#verifying-a-delivery');
  });

  it('/docs/docs.js is the search box script, revalidated by ETag', async () => {
    const res = await get('/docs/docs.js');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/javascript/);
    expect(res.body).toContain('anm-docs-search');
    const again = await app.inject({ method: 'GET', url: '/docs/docs.js', headers: { 'if-none-match': String(res.headers.etag) } });
    expect(again.statusCode).toBe(304);
  });
});

describe('Markdown is sanitised', () => {
  let hostile: FastifyInstance;
  beforeAll(async () => {
    hostile = await docsApp({ dir: path.resolve(import.meta.dirname, '../fixtures/docs-hostile') });
  });
  afterAll(async () => hostile.close());

  it('drops scripts, event handlers, javascript: and data: links, frames and forms; keeps the text', async () => {
    const res = await hostile.inject({ method: 'GET', url: '/docs/hostile' });
    expect(res.statusCode).toBe(200);
    const article = res.body.slice(res.body.indexOf('<article>'), res.body.indexOf('</article>'));
    expect(article).not.toMatch(/<script|<iframe|<form|<svg|<input/i);
    expect(article).not.toMatch(/\son[a-z]+=/i);
    // markdown-it shows a refused Markdown link as its source text; no attribute keeps the URL.
    expect(hrefs(article).filter((h) => /^\s*(javascript|data|vbscript):/i.test(h))).toEqual([]);
    expect(article).not.toMatch(/="\s*javascript:/i);
    expect(article).not.toMatch(/style="[^"]*url\(/i);
    expect(article).toContain('<strong>still here</strong>');
    expect(article).toContain('html javascript link');
    expect(article).toContain('href="/docs/other"');
    // A link to a file the site does not serve keeps its text, not its href.
    expect(article).toContain('a file outside the site');
    expect(article).not.toContain('package.json');
    const other = await hostile.inject({ method: 'GET', url: '/docs/other' });
    expect(other.body).toContain('href="/docs/hostile#safe-section"');
  });
});

describe('landing page', () => {
  it('GET / links the dashboard, docs, operator console and marketplace', async () => {
    const res = await get('/');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.headers['x-frame-options']).toBe('DENY');
    const links = hrefs(res.body);
    for (const l of ['/dashboard', '/docs', '/ops', 'http://127.0.0.1:3001/api/v1/resources']) expect(links).toContain(l);
    for (const l of links.filter((h) => h.startsWith('/docs') || h.startsWith('/assets'))) expect((await get(l)).statusCode, l).toBe(200);
  });
});
