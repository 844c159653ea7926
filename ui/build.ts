/**
 * Builds the browser code with esbuild's JS API, in memory: the checkout bundle (Lit
 * elements, ES module), the page stylesheet, and `widget.js` (a classic script for merchant
 * pages). The server builds once on first use and keeps the bytes (gateway/checkout/assets.ts);
 * `npm run build:ui` writes the same files to ui/dist/ to inspect them.
 */
import { createHash } from 'node:crypto';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type BuildOptions } from 'esbuild';

export interface Asset {
  /** URL path it is served at. */
  path: string;
  body: Buffer;
  contentType: string;
  /** Strong ETag: a hash of the bytes. */
  etag: string;
}

export interface UiBundle {
  checkoutJs: Asset;
  pageCss: Asset;
  widgetJs: Asset;
  icon: Asset;
  /** The docs site's search box (`/docs/docs.js`) and its stylesheet, also the landing page's. */
  docsJs: Asset;
  docsCss: Asset;
  /** The operator console (`/ops`): its elements and stylesheet. */
  opsJs: Asset;
  opsCss: Asset;
  dashboardJs: Asset;
  dashboardCss: Asset;
  /** The point of sale (`/pos`). */
  posJs: Asset;
  posCss: Asset;
}

// The page's icon, so the browser's automatic /favicon.ico request is not what it falls back to.
const ICON = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="7" fill="#0b57d0"/><path d="M9 24 16 7l7 17h-4l-3-8-3 8z" fill="#fff"/></svg>`;

const ROOT = path.dirname(fileURLToPath(import.meta.url));

function hashOf(body: Uint8Array): string {
  return createHash('sha256').update(body).digest('hex').slice(0, 16);
}

async function one(entry: string, opts: BuildOptions): Promise<Buffer> {
  const res = await build({
    entryPoints: [path.join(ROOT, entry)],
    bundle: true,
    write: false,
    minify: true,
    legalComments: 'none',
    target: ['es2022', 'chrome100', 'firefox100', 'safari15'],
    logLevel: 'silent',
    absWorkingDir: path.dirname(ROOT),
    ...opts,
  });
  const out = res.outputFiles?.[0];
  if (!out) throw new Error(`esbuild produced nothing for ${entry}`);
  return Buffer.from(out.contents);
}

function asset(name: string, ext: string, body: Buffer, contentType: string, hashed: boolean): Asset {
  const h = hashOf(body);
  return { path: hashed ? `/assets/${name}.${h}.${ext}` : `/${name}.${ext}`, body, contentType, etag: `"${h}"` };
}

export async function buildUi(): Promise<UiBundle> {
  const [checkout, css, widget, docs, docsCss, ops, opsCss, dashJs, dashCss, posJs, posCss] = await Promise.all([
    one('src/checkout.ts', { format: 'esm', platform: 'browser', outfile: 'checkout.js' }),
    one('src/page.css', { loader: { '.css': 'css' }, outfile: 'page.css' }),
    one('widget/widget.ts', { format: 'iife', platform: 'browser', outfile: 'widget.js' }),
    one('src/docs/main.ts', { format: 'esm', platform: 'browser', outfile: 'docs.js' }),
    one('src/docs/docs.css', { loader: { '.css': 'css' }, outfile: 'docs.css' }),
    one('src/ops/main.ts', { format: 'esm', platform: 'browser', outfile: 'ops.js' }),
    one('src/ops/ops.css', { loader: { '.css': 'css' }, outfile: 'ops.css' }),
    one('src/dashboard/main.ts', { format: 'esm', platform: 'browser', outfile: 'dashboard.js' }),
    one('src/dashboard/dashboard.css', { loader: { '.css': 'css' }, outfile: 'dashboard.css' }),
    one('src/pos/main.ts', { format: 'esm', platform: 'browser', outfile: 'pos.js' }),
    one('src/pos/pos.css', { loader: { '.css': 'css' }, outfile: 'pos.css' }),
  ]);
  return {
    checkoutJs: asset('checkout', 'js', checkout, 'text/javascript; charset=utf-8', true),
    pageCss: asset('page', 'css', css, 'text/css; charset=utf-8', true),
    widgetJs: asset('widget', 'js', widget, 'text/javascript; charset=utf-8', false),
    icon: asset('icon', 'svg', Buffer.from(ICON), 'image/svg+xml', true),
    // A stable URL (spec: `/docs/docs.js`), revalidated by ETag.
    docsJs: { ...asset('docs', 'js', docs, 'text/javascript; charset=utf-8', false), path: '/docs/docs.js' },
    docsCss: asset('docs', 'css', docsCss, 'text/css; charset=utf-8', true),
    opsJs: asset('ops', 'js', ops, 'text/javascript; charset=utf-8', true),
    opsCss: asset('ops', 'css', opsCss, 'text/css; charset=utf-8', true),
    dashboardJs: asset('dashboard', 'js', dashJs, 'text/javascript; charset=utf-8', true),
    dashboardCss: asset('dashboard', 'css', dashCss, 'text/css; charset=utf-8', true),
    posJs: asset('pos', 'js', posJs, 'text/javascript; charset=utf-8', true),
    posCss: asset('pos', 'css', posCss, 'text/css; charset=utf-8', true),
  };
}

let cached: Promise<UiBundle> | undefined;

/** The bundle, built on first call and kept; a failed build is retried on the next call. */
export function uiBundle(): Promise<UiBundle> {
  cached ??= buildUi().catch((err: unknown) => {
    cached = undefined;
    throw err;
  });
  return cached;
}

async function writeDist(): Promise<void> {
  const b = await buildUi();
  const dist = path.join(ROOT, 'dist');
  await rm(dist, { recursive: true, force: true });
  await mkdir(path.join(dist, 'assets'), { recursive: true });
  await mkdir(path.join(dist, 'docs'), { recursive: true });
  for (const a of [b.checkoutJs, b.pageCss, b.widgetJs, b.icon, b.docsJs, b.docsCss, b.opsJs, b.opsCss, b.dashboardJs, b.dashboardCss, b.posJs, b.posCss]) {
    await writeFile(path.join(dist, a.path), a.body);
    process.stdout.write(`${a.path.padEnd(40)} ${String(a.body.length).padStart(8)} bytes  etag ${a.etag}\n`);
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await writeDist();
}
