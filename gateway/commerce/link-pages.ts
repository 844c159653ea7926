/**
 * The public side of payment links (DESIGN §7): `GET /p/{handle}/{slug}` the product page,
 * `GET /l/{code}` a 302 to it, `POST /p/{handle}/{slug}` a buyer pressing Pay (per-IP limit
 * per link, kept in PostgreSQL for every process and taken by the link's own lookup; then the
 * hold and the intent, then 303 to `/c/{id}`). Every answer is an HTML page: 404 for an
 * unknown or inactive link, 409 "sold out", 429 over the limit, 403 for a test link without
 * its merchant's dashboard session.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { uiBundle } from '../../ui/build.ts';
import type { PersistedSnapshot } from '../../machines/kit/step.ts';
import type { PublicLink } from '../../runtime/commerce/links.ts';
import { HANDLE_PATTERN } from '../../runtime/merchant/merchants.ts';
import { pageHeaders } from '../checkout/headers.ts';
import { messageHtml } from '../checkout/html.ts';
import type { GatewayDeps } from '../deps.ts';
import { AppError, ensureError } from '../errors.ts';
import { PageCache, sendCached } from '../http/page-cache.ts';
import { SLUG } from './link-input.ts';
import { productHtml } from './link-html.ts';
import { payLink } from './link-pay.ts';

const CODE = /^[a-z2-7]{8}$/;
const SESSION = /(?:^|;\s*)anm_session=([^;\s]+)/;

interface Params {
  handle: string;
  slug: string;
}

/** The checkout's headers, but the product page's own form may post back here. */
function headers(): Record<string, string> {
  const h = pageHeaders(null);
  h['Content-Security-Policy'] = h['Content-Security-Policy']!.replace("form-action 'none'", "form-action 'self'");
  return h;
}

/**
 * The product page's 200: public (no capability in its address), so a browser may keep it and
 * revalidate it by its ETag on every view; `no-cache` never shows a kept copy unasked.
 */
const productHeaders: Record<string, string> = { ...headers(), 'Cache-Control': 'no-cache' };

async function assets() {
  const b = await uiBundle();
  return { css: b.pageCss.path, icon: b.icon.path };
}

async function message(reply: FastifyReply, status: number, title: string, text: string): Promise<FastifyReply> {
  return reply.code(status).headers(headers()).send(messageHtml(title, text, await assets()));
}

const notFound = (reply: FastifyReply) => message(reply, 404, 'Payment link not found', 'There is no active payment link at this address.');

export default async function linkPages(app: FastifyInstance, opts: { deps: GatewayDeps }): Promise<void> {
  const d = opts.deps;
  const commerce = d.commerce;
  if (!commerce) return;
  // The Pay form posts urlencoded; only this plugin's routes take it.
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: 4096 }, (_req, text, done) => {
    done(null, Object.fromEntries(new URLSearchParams(String(text))));
  });

  // Rendered product pages by path, per link version (units left change with every hold).
  const pages = new PageCache<Pick<PublicLink, 'snapshot' | 'mode' | 'merchant_name'>>();

  /** A test link is paid only by a request carrying its own merchant's dashboard session. */
  async function ownMerchant(req: FastifyRequest, link: PublicLink): Promise<boolean> {
    const token = SESSION.exec(req.headers.cookie ?? '')?.[1];
    if (!token || !d.dashboard) return false;
    const s = await d.dashboard.sessions.lookup('merchant', token);
    return s?.principal === link.merchant;
  }

  app.get<{ Params: Params }>('/p/:handle/:slug', async (req, reply) => {
    const p = req.params;
    if (!HANDLE_PATTERN.test(p.handle) || !SLUG.test(p.slug)) return notFound(reply);
    const action = req.url.split('?')[0]!;
    const known = pages.get(action);
    const r = await commerce.links.page(p.handle, p.slug, known);
    if (!r || r.state !== 'ACTIVE') return notFound(reply);
    // A null snapshot means the version the cached page was rendered from is still current.
    const snapshot: PersistedSnapshot = r.snapshot ?? known!.row.snapshot;
    const a = await assets();
    const page = pages.page(action, { id: r.id, version: r.version, variant: `${r.mode} ${r.merchant_name}`, row: { snapshot, mode: r.mode, merchant_name: r.merchant_name } }, (row) =>
      productHtml(row, a, { action }),
    );
    return sendCached(req, reply, productHeaders, page);
  });

  app.get<{ Params: { code: string } }>('/l/:code', async (req, reply) => {
    const to = CODE.test(req.params.code) ? await commerce.links.byCode(req.params.code) : null;
    if (!to) return notFound(reply);
    return reply.headers({ 'Cache-Control': 'no-store', 'Referrer-Policy': 'no-referrer' }).redirect(`/p/${to.handle}/${to.slug}`, 302);
  });

  app.post<{ Params: Params }>('/p/:handle/:slug', async (req, reply) => {
    const p = req.params;
    // The lookup takes the buyer's token in the same statement (shared by every process).
    const press = HANDLE_PATTERN.test(p.handle) && SLUG.test(p.slug) ? await commerce.links.press(p.handle, p.slug, req.ip, commerce.payPerIpPerMinute) : null;
    const link = press?.link.state === 'ACTIVE' ? press.link : null;
    if (!press || !link) return notFound(reply);
    if (!press.allowed) {
      void reply.header('Retry-After', String(press.retryAfter));
      return message(reply, 429, 'Too many attempts', `Please wait ${press.retryAfter} seconds and try again.`);
    }
    if (link.mode === 'test' && !(await ownMerchant(req, link))) {
      return message(reply, 403, 'Test link', 'This is a test payment link: only its merchant, signed in to the dashboard, can pay it.');
    }
    const form = (req.body ?? {}) as Record<string, unknown>;
    try {
      const r = await payLink(d, link, form.amount);
      if (r.kind === 'sold_out') return message(reply, 409, 'Sold out', 'Every unit of this product is sold or held for another buyer. Units held for buyers who do not pay come back within 30 minutes.');
      if (r.kind === 'inactive') return notFound(reply);
      return reply.headers({ 'Cache-Control': 'no-store' }).redirect(`/c/${r.intentId}`, 303);
    } catch (thrown) {
      const err = ensureError(thrown);
      if (!(err instanceof AppError) || err.status >= 500) throw thrown;
      return reply.code(err.status).headers(headers()).send(productHtml(link, await assets(), { action: req.url.split('?')[0]!, error: err.message }));
    }
  });
}
