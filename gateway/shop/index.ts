/**
 * The shop (`/shop`, `/shop/{handle}`, DESIGN §7 "Shop"): server-rendered pages, no login, no
 * JavaScript. The directory is off unless `ANMPAY_SHOP_DIRECTORY=1`, and then lists only the
 * merchants that opted in from the dashboard and have a verified live payout address; search
 * by name with `?q=`. A storefront is such a merchant's active live payment links, each a
 * link to its product page. Every merchant-supplied string goes through `esc`.
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { PaymentLinkContext } from '../../machines/payment-link/context.ts';
import { unitsLeft } from '../../machines/payment-link/rules.ts';
import type { ShopEntry } from '../../runtime/commerce/shop.ts';
import { uiBundle } from '../../ui/build.ts';
import { sendPage } from '../checkout/headers.ts';
import { esc, layout, messageHtml } from '../checkout/html.ts';
import { priceText } from '../commerce/link-html.ts';
import { HANDLE_PATTERN } from '../../runtime/merchant/merchants.ts';
import type { GatewayDeps } from '../deps.ts';
import { admit, ipLimit, refuse } from '../http/admission.ts';

const entryHtml = (e: ShopEntry): string =>
  `<li><a href="/shop/${esc(e.handle)}"><strong>${esc(e.name)}</strong></a>${e.description ? `<p>${esc(e.description)}</p>` : ''}<p class="units">${e.links} ${e.links === 1 ? 'product' : 'products'}</p></li>`;

export default async function shop(app: FastifyInstance, opts: { deps: GatewayDeps }): Promise<void> {
  const d = opts.deps;
  const svc = d.dashboard;
  if (!svc) return;
  const assets = async () => {
    const b = await uiBundle();
    return { css: b.pageCss.path, icon: b.icon.path };
  };
  const page = async (reply: FastifyReply, status: number, title: string, body: string) =>
    sendPage(reply, status, layout(title, `<main class="shop">${body}</main>`, await assets()));

  app.get<{ Querystring: { q?: unknown } }>('/shop', async (req, reply) => {
    const a = await admit(d.gate, req, reply, [ipLimit]);
    if (!a.admitted) return refuse(reply, a);
    if (!svc.shopDirectory) return page(reply, 200, 'Shop directory', `<h1>Shop directory</h1><p role="note">The shop directory is not enabled on this service.</p>`);
    const q = typeof req.query.q === 'string' ? req.query.q.trim().slice(0, 100) : '';
    const shops = await svc.shop.directory(q);
    const list = shops.length ? `<ul class="shops">${shops.map(entryHtml).join('')}</ul>` : `<p>${q ? 'No shop matches that name.' : 'No shop is listed yet.'}</p>`;
    return page(
      reply,
      200,
      'Shop directory',
      `<h1>Shop directory</h1>
<form method="get" action="/shop" role="search"><label>Search by name <input name="q" value="${esc(q)}" maxlength="100"></label> <button type="submit">Search</button></form>
${list}`,
    );
  });

  app.get<{ Params: { handle: string } }>('/shop/:handle', async (req, reply) => {
    const a = await admit(d.gate, req, reply, [ipLimit]);
    if (!a.admitted) return refuse(reply, a);
    const found = HANDLE_PATTERN.test(req.params.handle) ? await svc.shop.storefront(req.params.handle) : null;
    if (!found) return sendPage(reply, 404, messageHtml('Shop not found', 'There is no shop at this address.', await assets()));
    const { shop: s, links } = found;
    const items = links.map((l) => {
      const c = l.snapshot.context as PaymentLinkContext;
      const left = unitsLeft(c);
      return `<li><a href="/p/${esc(s.handle)}/${esc(c.slug)}"><strong>${esc(c.title)}</strong></a> <span class="price">${esc(priceText(c))}</span>${
        c.description ? `<p>${esc(c.description)}</p>` : ''
      }${left === null ? '' : `<p class="units">${left <= 0 ? 'Sold out' : `${left} left`}</p>`}</li>`;
    });
    return page(
      reply,
      200,
      `${s.name} · Shop`,
      `<p><a href="/shop">All shops</a></p><h1>${esc(s.name)}</h1>${s.description ? `<p>${esc(s.description)}</p>` : ''}
${items.length ? `<ul class="products">${items.join('')}</ul>` : '<p>Nothing for sale right now.</p>'}`,
    );
  });
}
