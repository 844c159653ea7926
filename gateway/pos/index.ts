/**
 * The point of sale (`/pos`, DESIGN §7): a keypad page for a merchant's dashboard session.
 * "Charge" sends the same `intent.create` command as the API (metadata `source: "pos"`, the
 * session's mode) and answers with the checkout's page data, so the screen shows the QR code
 * and live status with the checkout's own elements; `/pos/api/sales` is the day's sales and
 * totals. The session is the dashboard's: its cookie is also set on `/pos`, nowhere else.
 *
 *   GET  /pos                 the page (no login: 303 to /dashboard/login)
 *   GET  /pos/api/sales?since=<ISO>   the sales made here since the till's midnight
 *   GET  /pos/api/products    the product grid (cart.ts)
 *   POST /pos/api/charge      {sale_id, amount, currency, note?} or {sale_id, items, note?} → 201 {checkout}
 *                             (a cart's limited products take a hold per unit first: holds.ts)
 */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { toCheckoutPage } from '../../machines/payment-intent/checkout-view.ts';
import type { PaymentIntentContext } from '../../machines/payment-intent/context.ts';
import { formatAnm } from '../../machines/money/money.ts';
import { toResource } from '../../machines/payment-intent/view.ts';
import { POS_SOURCE } from '../../runtime/commerce/pos-sales.ts';
import { keyedId } from '../../runtime/merchant/secrets.ts';
import type { CheckoutPageData } from '../../ui/src/types.ts';
import { uiBundle } from '../../ui/build.ts';
import { sendPage } from '../checkout/headers.ts';
import { esc, jsonForScript, layout } from '../checkout/html.ts';
import { pageWho } from '../dashboard/accounts.ts';
import { admitDash, parseBody, type Dash } from '../dashboard/context.ts';
import { MERCHANT_SESSION_PATHS, SESSION_COOKIE } from '../dashboard/session-paths.ts';
import type { GatewayDeps } from '../deps.ts';
import { AppError } from '../errors.ts';
import { isPlainObject, strictJsonParser } from '../http/body.ts';
import { sendError } from '../http/error-reply.ts';
import { installSessions } from '../http/sessions/index.ts';
import { intentCreateEvent, prepareCreate } from '../payment-intents/create-event.ts';
import { priceCart, products } from './cart.ts';
import { takeHolds } from './holds.ts';

const Charge = z.strictObject({
  /** Made by the till for each sale: a second tap (or a retry) charges the same intent. */
  sale_id: z.string().regex(/^[A-Za-z0-9_-]{8,64}$/),
  amount: z.string().max(40).optional(),
  currency: z.string().max(8).optional(),
  /** A cart from the product grid instead of a keyed amount. */
  items: z
    .array(z.strictObject({ link: z.string().max(64), quantity: z.number().int().min(1).max(999) }))
    .min(1)
    .max(50)
    .optional(),
  note: z.string().max(500).optional(),
});

const DAY_MS = 86_400_000;
const Since = z.strictObject({ since: z.iso.datetime({ offset: true }).optional() });

export default async function pointOfSale(app: FastifyInstance, opts: { deps: GatewayDeps }): Promise<void> {
  const d = opts.deps;
  const svc = d.dashboard;
  if (!svc) return;
  const now = d.now ?? Date.now;
  strictJsonParser(app);
  app.setErrorHandler((err, req, reply) => sendError(req, reply, err));
  const s = await installSessions(app, { kind: 'merchant', cookieName: SESSION_COOKIE, ...MERCHANT_SESSION_PATHS.for('/pos'), store: svc.sessions, baseUrl: d.baseUrl });
  const x: Dash = { d, svc, s };

  app.get('/pos', async (req, reply) => {
    await admitDash(x, req, reply, { public: true });
    const who = pageWho(req, reply);
    if (!who) return reply;
    const m = await svc.accounts.profile(who.merchant);
    if (!m) return reply.redirect('/dashboard/login', 303);
    const b = await uiBundle();
    const data = { csrf: s.csrf(reply), mode: who.mode, merchant: m.name, currencies: ['ANM', ...(await d.rates.currencies())] };
    const body = `<anm-pos><main class="static"><h1>Point of sale</h1><noscript><p>The point of sale needs JavaScript.</p></noscript></main></anm-pos>
<script type="application/json" id="anm-pos-data">${jsonForScript(data)}</script>`;
    const head = `<link rel="stylesheet" href="${esc(b.posCss.path)}">\n<script type="module" src="${esc(b.posJs.path)}"></script>\n`;
    return sendPage(reply, 200, layout(`Point of sale · ${m.name}`, body, { css: b.pageCss.path, icon: b.icon.path }, head, 'pos'));
  });

  app.get('/pos/api/sales', async (req, reply) => {
    const who = await admitDash(x, req, reply);
    const q = parseBody(Since, req.query);
    // The till says when its day began; a day at most, so this never reads further back.
    const floor = now() - DAY_MS;
    const since = new Date(Math.max(floor, q.since ? Date.parse(q.since) : floor));
    const day = await svc.pos.since(who.merchant, who.mode, since);
    return {
      mode: who.mode,
      since: since.toISOString(),
      totals: { count: day.count, paid_count: day.paidCount, paid_anm: day.paidNanm.toString(), paid_anm_formatted: formatAnm(day.paidNanm) },
      data: day.rows.map((r) => toResource(r.snapshot.context as PaymentIntentContext, r.state, { baseUrl: d.baseUrl() })),
    };
  });

  app.get('/pos/api/products', async (req, reply) => {
    const who = await admitDash(x, req, reply);
    return { data: d.commerce ? await products(d.commerce.links, who.merchant, who.mode) : [] };
  });

  /** The intent's amount, currency, description and metadata (a keyed amount, or a cart priced here), and the cart's limited lines. */
  async function saleOf(who: { merchant: string; mode: 'test' | 'live' }, c: z.infer<typeof Charge>) {
    const note = c.note?.trim() ?? '';
    if (!c.items) {
      if (c.amount === undefined || c.currency === undefined) throw new AppError('invalid_body', 'Send amount and currency, or items.');
      return { create: { amount: c.amount, currency: c.currency, ...(note ? { description: note } : {}), metadata: { source: POS_SOURCE } }, held: [] };
    }
    if (c.amount !== undefined || c.currency !== undefined) throw new AppError('invalid_body', 'Send amount and currency, or items, not both.');
    const grid = d.commerce ? await products(d.commerce.links, who.merchant, who.mode) : [];
    const cart = priceCart(grid, c.items);
    const description = (note ? `${cart.description} · ${note}` : cart.description).slice(0, 500);
    return { create: { amount: cart.amount, currency: cart.currency, description, metadata: { source: POS_SOURCE, cart: c.items } }, held: cart.held };
  }

  app.post('/pos/api/charge', async (req, reply) => {
    const who = await admitDash(x, req, reply);
    // Before the schema, which would call it a malformed body: the spec gives a JSON number amount its own code.
    if (isPlainObject(req.body) && typeof req.body.amount === 'number') throw new AppError('amount_must_be_string');
    const c = parseBody(Charge, req.body);
    const [m, payout] = await Promise.all([svc.accounts.profile(who.merchant), svc.payout.get(who.merchant, who.mode)]);
    if (!m || m.status !== 'active') throw new AppError('forbidden', 'This account is suspended.');
    if (!payout.address) throw new AppError('payout_address_required');
    const sale = await saleOf(who, c);
    const prepared = await prepareCreate(d, sale.create);
    const id = keyedId('pay_', d.pepper, ['pos', who.merchant, who.mode, c.sale_id]);
    const at = now();
    if (sale.held.length > 0) {
      // Units first: a sale whose unit is gone is refused before any intent exists. Should the
      // intent's write fail after this, a retry of the sale finds these same holds.
      const holds = await takeHolds(d, { merchant: who.merchant, mode: who.mode, saleId: c.sale_id, intentId: id, at }, sale.held);
      prepared.input.metadata = { ...prepared.input.metadata, holds };
    }
    const owner = { merchant: who.merchant, mode: who.mode, payoutAddress: payout.address, successUrl: null, cancelUrl: null };
    const r = await d.host.apply({ kind: 'payment_intent', id, merchant: who.merchant, mode: who.mode }, intentCreateEvent(d, id, owner, prepared, at));
    const view = toCheckoutPage(r.snapshot.context as PaymentIntentContext, r.status, { version: r.version, merchantName: m.name, now: at });
    const checkout: CheckoutPageData = { ...view, events_url: `/c/${id}/events?last_event_id=${r.version}`, embed: null };
    return reply.code(r.outcome === 'applied' ? 201 : 200).send({ checkout });
  });
}
