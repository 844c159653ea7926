/**
 * The dashboard's HTML: one server-rendered shell per page (title, navigation for no-JS
 * readers, the page's data as JSON in a non-executable block) that the Lit bundle fills from
 * the page's `/dashboard/api/…` endpoints. A page asked for without a login redirects to
 * `/dashboard/login`. Same security headers as the checkout (no inline script, framing denied).
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { DashPage, DashPageData } from '../../ui/src/dashboard/types.ts';
import { uiBundle } from '../../ui/build.ts';
import { sendPage } from '../checkout/headers.ts';
import { INTENT_ID } from '../checkout/events.ts';
import { esc, jsonForScript, layout, messageHtml } from '../checkout/html.ts';
import { AppError } from '../errors.ts';
import { pageWho } from './accounts.ts';
import { admitDash, type Dash } from './context.ts';

const TITLES: Record<DashPage, string> = {
  login: 'Log in',
  signup: 'Create an account',
  home: 'Home',
  keys: 'API keys',
  payments: 'Payments',
  payment: 'Payment',
  links: 'Payment links',
  invoices: 'Invoices',
  webhooks: 'Webhooks',
  settings: 'Payout and widget',
  account: 'Account',
};

const NAV: Array<[DashPage, string]> = [
  ['home', '/dashboard'],
  ['payments', '/dashboard/payments'],
  ['links', '/dashboard/links'],
  ['invoices', '/dashboard/invoices'],
  ['keys', '/dashboard/keys'],
  ['webhooks', '/dashboard/webhooks'],
  ['settings', '/dashboard/settings'],
  ['account', '/dashboard/account'],
];

async function send(reply: FastifyReply, data: DashPageData): Promise<FastifyReply> {
  const b = await uiBundle();
  const nav = data.merchant ? `<nav aria-label="Dashboard"><ul>${NAV.map(([p, href]) => `<li><a href="${href}">${esc(TITLES[p])}</a></li>`).join('')}</ul></nav>` : '';
  const body = `<anm-dashboard>${nav}<main class="static"><h1>${esc(TITLES[data.page])}</h1><noscript><p>The dashboard needs JavaScript.</p></noscript></main></anm-dashboard>
<script type="application/json" id="anm-dashboard-data">${jsonForScript(data)}</script>`;
  const head = `<link rel="stylesheet" href="${esc(b.dashboardCss.path)}">\n<script type="module" src="${esc(b.dashboardJs.path)}"></script>\n`;
  return sendPage(reply, 200, layout(`${TITLES[data.page]} · ANM Pay dashboard`, body, { css: b.pageCss.path, icon: b.icon.path }, head, 'dash'));
}

export function pageRoutes(app: FastifyInstance, x: Dash): void {
  const { svc, s } = x;
  const base = { merchant: null, id: null, signup: svc.openSignup, mode: 'test' as const };

  app.get('/dashboard/login', async (req, reply) => {
    await admitDash(x, req, reply, { public: true });
    if (req.anmSession?.principal) return reply.redirect('/dashboard', 303);
    return send(reply, { ...base, page: 'login', csrf: await s.visitorCsrf(req, reply) });
  });

  app.get('/dashboard/signup', async (req, reply) => {
    await admitDash(x, req, reply, { public: true });
    if (!svc.openSignup) throw new AppError('not_found');
    return send(reply, { ...base, page: 'signup', csrf: await s.visitorCsrf(req, reply) });
  });

  const page = (path: string, name: DashPage) =>
    app.get<{ Params: { id?: string } }>(path, async (req, reply) => {
      await admitDash(x, req, reply, { public: true });
      const who = pageWho(req, reply);
      if (!who) return reply;
      const m = await svc.accounts.profile(who.merchant);
      if (!m) {
        await s.end(req, reply);
        return reply.redirect('/dashboard/login', 303);
      }
      // Another merchant's (or mode's) payment is a 404 here too, not an empty page.
      if (name === 'payment' && !(INTENT_ID.test(req.params.id ?? '') && (await svc.reads.payment(who.merchant, who.mode, req.params.id!)))) {
        const b = await uiBundle();
        return sendPage(reply, 404, messageHtml('Payment not found', 'There is no such payment in this mode.', { css: b.pageCss.path, icon: b.icon.path }));
      }
      const merchant = { name: m.name, handle: m.handle, email: m.email };
      return send(reply, { ...base, page: name, merchant, mode: who.mode, id: req.params.id ?? null, csrf: s.csrf(reply) });
    });
  page('/dashboard', 'home');
  page('/dashboard/keys', 'keys');
  page('/dashboard/payments', 'payments');
  page('/dashboard/payments/:id', 'payment');
  page('/dashboard/links', 'links');
  page('/dashboard/invoices', 'invoices');
  page('/dashboard/webhooks', 'webhooks');
  page('/dashboard/settings', 'settings');
  page('/dashboard/account', 'account');
}
