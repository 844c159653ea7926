/**
 * `GET /c/{id}`: the hosted checkout (spec Endpoints; Authentication 8: the unguessable id is
 * the capability). Server-rendered shell + JSON data block + the Lit bundle. `?embed=1` is the
 * widget's iframe: it needs the merchant's publishable key (`pk`, same merchant and mode as the
 * intent) and may be framed only by the merchant's allowed origins (a loopback `*` port
 * only for a test intent). Unknown id, or an embed
 * that does not check out: a 404 page.
 */
import type { FastifyInstance } from 'fastify';
import type { PaymentIntentContext } from '../../machines/payment-intent/context.ts';
import { toCheckoutPage } from '../../machines/payment-intent/checkout-view.ts';
import { hashApiKey, parseApiKey } from '../../runtime/merchant/secrets.ts';
import { originsForMode } from '../../runtime/merchant/origins.ts';
import type { CheckoutPageData } from '../../ui/src/types.ts';
import { uiBundle } from '../../ui/build.ts';
import type { GatewayDeps } from '../deps.ts';
import { ensureError } from '../errors.ts';
import { admit, ipLimit, refuse } from '../http/admission.ts';
import { INTENT_ID } from './events.ts';
import { sendPage } from './headers.ts';
import { checkoutHtml, messageHtml } from './html.ts';

type Query = { embed?: string; pk?: string };

export function checkoutPage(app: FastifyInstance, d: GatewayDeps): void {
  const now = d.now ?? Date.now;

  // Errors on this page are pages too, with the same headers.
  app.setErrorHandler(async (err, req, reply) => {
    const e = ensureError(err);
    if (e.status >= 500) req.log.error({ err }, 'checkout page failed');
    const b = await uiBundle().catch(() => null);
    const assets = { css: b?.pageCss.path ?? '', icon: b?.icon.path ?? '' };
    if (e.opts.headers) void reply.headers(e.opts.headers);
    const [title, message] =
      e.status === 429 ? ['Too many requests', 'Please wait a moment and reload the page.'] : ['Something went wrong', 'The checkout could not be shown. Please reload the page.'];
    return sendPage(reply, e.status >= 500 ? 500 : e.status, messageHtml(title, message, assets));
  });

  app.get<{ Params: { id: string }; Querystring: Query }>('/c/:id', async (req, reply) => {
    const bundle = await uiBundle();
    const assets = { js: bundle.checkoutJs.path, css: bundle.pageCss.path, icon: bundle.icon.path };
    const notFound = () => sendPage(reply, 404, messageHtml('Checkout not found', 'There is no payment at this address. Check the link the merchant gave you.', assets));
    const a = await admit(d.gate, req, reply, [ipLimit]);
    if (!a.admitted) return refuse(reply, a);
    const id = req.params.id;
    if (!INTENT_ID.test(id)) return notFound();

    const embed = req.query.embed === '1';
    const pk = typeof req.query.pk === 'string' ? req.query.pk : '';
    // Only a publishable key is ever looked at; a secret key here is treated as no key at all.
    const pkHash = embed && parseApiKey(pk)?.kind === 'publishable' ? hashApiKey(d.pepper, pk) : null;
    const row = await d.checkout.byId(id, embed ? (pkHash ?? '') : null);
    if (!row) return notFound();
    const origins = originsForMode(row.allowedOrigins, row.mode);
    if (embed && (!row.keyMatches || origins.length === 0)) return notFound();

    const view = toCheckoutPage(row.snapshot.context as PaymentIntentContext, row.state, { version: row.version, merchantName: row.merchantName, now: now() });
    const data: CheckoutPageData = {
      ...view,
      events_url: `/c/${id}/events?last_event_id=${row.version}`,
      embed: embed ? { origins } : null,
    };
    return sendPage(reply, 200, checkoutHtml(data, assets), embed ? origins : null);
  });
}
