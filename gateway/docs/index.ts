/**
 * The docs site (spec routes `/docs`, `/docs/{page}`, `/docs/search`,
 * `/docs/search-index.json`, `/docs/docs.js`; DESIGN §7 "Docs site"). Pages are rendered
 * from `docs/` and indexed once per process, on the first request that needs them; the API
 * reference is generated from the served OpenAPI document. An unknown page is a 404 page that
 * lists every page. Headers as on the hosted checkout, except that the search form may submit
 * to the site itself.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { uiBundle } from '../../ui/build.ts';
import { sendAsset } from '../checkout/assets.ts';
import { pageHeaders } from '../checkout/headers.ts';
import { JSON_TYPE } from '../http/reply.ts';
import { apiReferenceMarkdown } from './api-reference.ts';
import { DOCS_DIR, loadCatalogue, type Catalogue } from './catalogue.ts';
import { indexHtml, notFoundHtml, pageHtml, resultsHtml, type DocsAssets } from './layout.ts';
import { buildSearch, type DocsSearch } from './search.ts';

export interface DocsOptions {
  /** The OpenAPI document the service serves (the API reference is written from it). */
  openapi: () => Record<string, unknown>;
  /** Folder of Markdown pages; the repository's `docs/` by default (tests pass fixtures). */
  dir?: string;
}

interface Site {
  cat: Catalogue;
  search: DocsSearch;
  assets: DocsAssets;
}

/** Security headers of every docs page: the checkout's, with the search form allowed to submit here. */
export function docsHeaders(): Record<string, string> {
  const h = pageHeaders(null);
  h['Content-Security-Policy'] = h['Content-Security-Policy']!.replace("form-action 'none'", "form-action 'self'");
  // The docs are public and change only with a deploy: a short cache, revalidated.
  h['Cache-Control'] = 'public, max-age=60';
  h['Referrer-Policy'] = 'same-origin';
  return h;
}

function sendHtml(reply: FastifyReply, status: number, html: string): FastifyReply {
  return reply.code(status).headers(docsHeaders()).send(html);
}

function firstString(v: unknown): string {
  if (Array.isArray(v)) return firstString(v[0]);
  return typeof v === 'string' ? v : '';
}

export default async function docsSite(app: FastifyInstance, o: DocsOptions): Promise<void> {
  let site: Promise<Site> | undefined;
  const load = (): Promise<Site> => {
    site ??= (async () => {
      const [cat, b] = await Promise.all([
        loadCatalogue(o.dir ?? DOCS_DIR, [{ name: 'api-reference', section: 'guide', markdown: apiReferenceMarkdown(o.openapi()) }]),
        uiBundle(),
      ]);
      return { cat, search: buildSearch(cat), assets: { js: b.docsJs.path, css: b.docsCss.path, icon: b.icon.path } };
    })().catch((err: unknown) => {
      site = undefined;
      throw err;
    });
    return site;
  };

  app.get('/docs', async (_req, reply) => {
    const s = await load();
    return sendHtml(reply, 200, indexHtml(s.cat, s.assets));
  });

  app.get('/docs/', async (_req, reply) => reply.redirect('/docs', 301));

  app.get('/docs/search', async (req, reply) => {
    const s = await load();
    const q = firstString((req.query as Record<string, unknown>).q).slice(0, 200);
    return sendHtml(reply, 200, resultsHtml(s.cat, s.assets, q, s.search.search(q)));
  });

  app.get('/docs/search-index.json', async (req, reply) => {
    const s = await load();
    return reply.header('Cache-Control', 'public, max-age=60').header('X-Content-Type-Options', 'nosniff').type(JSON_TYPE).send(s.search.json);
  });

  app.get('/docs/docs.js', async (req, reply) => {
    const b = await uiBundle();
    return sendAsset(req, reply, b.docsJs, 'public, max-age=300', 'same-origin');
  });

  // The Grafana dashboard the observability page links (docs/grafana-dashboard.json).
  let dashboard: Promise<string> | undefined;
  app.get('/docs/grafana-dashboard.json', async (_req, reply) => {
    dashboard ??= readFile(path.join(DOCS_DIR, 'grafana-dashboard.json'), 'utf8');
    return reply.header('Cache-Control', 'public, max-age=60').header('X-Content-Type-Options', 'nosniff').type(JSON_TYPE).send(await dashboard);
  });

  app.get<{ Params: { page: string } }>('/docs/:page', async (req, reply) => {
    const s = await load();
    const page = s.cat.pages.get(req.params.page);
    if (!page) return sendHtml(reply, 404, notFoundHtml(s.cat, s.assets, req.params.page));
    return sendHtml(reply, 200, pageHtml(s.cat, s.assets, page));
  });
}
