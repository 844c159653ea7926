/**
 * `GET /i/{token}` and `POST /i/{token}/pay` (spec Endpoints; Authentication 8: the token,
 * 160 random bits, is the capability). The page is server-rendered HTML with no script; Pay
 * is a plain form post that creates or reuses the invoice's payment intent and answers 303 to
 * `/c/{id}`. Unknown token (or a draft): 404 page. Paid, void or uncollectible: a 409 page
 * that says so, never a payment.
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { InvoiceContext } from '../../machines/invoice/context.ts';
import { uiBundle } from '../../ui/build.ts';
import { pageHeaders } from '../checkout/headers.ts';
import { messageHtml } from '../checkout/html.ts';
import type { GatewayDeps } from '../deps.ts';
import { ensureError } from '../errors.ts';
import { admit, ipLimit, refuse } from '../http/admission.ts';
import { PageCache, sendCached } from '../http/page-cache.ts';
import { isOverdue } from '../../machines/invoice/rules.ts';
import type { PersistedSnapshot } from '../../machines/kit/step.ts';
import { INVOICE_TOKEN, invoiceCommands } from './commands.ts';
import { invoiceHtml } from './html.ts';

/** The checkout's headers, but the page's own form may post to this origin. */
function headers(): Record<string, string> {
  const h = pageHeaders(null);
  h['Content-Security-Policy'] = (h['Content-Security-Policy'] ?? '').replace("form-action 'none'", "form-action 'self'");
  return h;
}
const HEADERS = headers();

function send(reply: FastifyReply, status: number, html: string): FastifyReply {
  return reply.code(status).headers(HEADERS).send(html);
}

async function assets() {
  const b = await uiBundle();
  return { css: b.pageCss.path, icon: b.icon.path };
}

export default async function invoicePages(app: FastifyInstance, opts: { deps: GatewayDeps }): Promise<void> {
  const d = opts.deps;
  const now = d.now ?? Date.now;
  const commands = invoiceCommands(d);
  // Pay is a plain form post: whatever it sends is read (a few bytes at most) and ignored.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: 4096 }, (_req, _body, done) => done(null, undefined));

  app.setErrorHandler(async (err, req, reply) => {
    const e = ensureError(err);
    if (e.status >= 500) req.log.error({ err }, 'invoice page failed');
    if (e.opts.headers) void reply.headers(e.opts.headers);
    const a = await assets().catch(() => ({ css: '', icon: '' }));
    const [title, message] =
      e.status === 429
        ? ['Too many requests', 'Please wait a moment and try again.']
        : e.status < 500
          ? ['This invoice cannot be paid now', e.message]
          : ['Something went wrong', 'The invoice could not be shown. Please reload the page.'];
    return send(reply, e.status >= 500 ? 500 : e.status, messageHtml(title, message, a));
  });

  const notFound = async (reply: FastifyReply) =>
    send(reply, 404, messageHtml('Invoice not found', 'There is no invoice at this address. Check the link the merchant sent you.', await assets()));

  async function find(token: string) {
    return INVOICE_TOKEN.test(token) && d.invoices ? d.invoices.byToken(token) : null;
  }

  // Rendered pages by token, per invoice version, merchant name and whether it shows overdue.
  const pages = new PageCache<{ snapshot: PersistedSnapshot; state: string; merchantName: string }>();

  app.get<{ Params: { token: string } }>('/i/:token', async (req, reply) => {
    const a = await admit(d.gate, req, reply, [ipLimit]);
    if (!a.admitted) return refuse(reply, a);
    const token = req.params.token;
    if (!INVOICE_TOKEN.test(token) || !d.invoices) return notFound(reply);
    const known = pages.get(token);
    const inv = await d.invoices.pageByToken(token, known);
    if (!inv) return notFound(reply);
    // A null snapshot means the version the cached page was rendered from is still current.
    const snapshot = inv.snapshot ?? known!.row.snapshot;
    const at = now();
    const overdue = isOverdue(snapshot.context as InvoiceContext, inv.state, at);
    const assetPaths = await assets();
    const page = pages.page(token, { id: inv.id, version: inv.version, variant: `${overdue} ${inv.merchantName}`, row: { snapshot, state: inv.state, merchantName: inv.merchantName } }, (row) =>
      invoiceHtml(row.snapshot.context as InvoiceContext, row.state, { merchantName: row.merchantName, now: at, assets: assetPaths }),
    );
    return sendCached(req, reply, HEADERS, page);
  });

  app.post<{ Params: { token: string } }>('/i/:token/pay', async (req, reply) => {
    const a = await admit(d.gate, req, reply, [ipLimit]);
    if (!a.admitted) return refuse(reply, a);
    const inv = await find(req.params.token);
    if (!inv) return notFound(reply);
    if (inv.state !== 'OPEN') {
      // The invoice as it stands, saying why there is nothing to pay.
      const html = invoiceHtml(inv.snapshot.context as InvoiceContext, inv.state, { merchantName: inv.merchantName, now: now(), assets: await assets() });
      return send(reply, 409, html);
    }
    const intentId = await commands.pay(inv);
    return reply.code(303).header('Location', `/c/${intentId}`).header('Cache-Control', 'no-store').send();
  });
}
