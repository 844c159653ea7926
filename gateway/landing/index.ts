/**
 * `GET /`: the landing page (DESIGN §6) linking the merchant dashboard, the docs, the operator
 * console and the marketplace. The marketplace listens on its own port, so its address comes
 * from the composition root when this process runs it.
 */
import type { FastifyInstance } from 'fastify';
import { uiBundle } from '../../ui/build.ts';
import { esc } from '../checkout/html.ts';
import { docsHeaders } from '../docs/index.ts';

export interface LandingOptions {
  /** Where the marketplace answers, when known (`MARKETPLACE_PORT` on this host otherwise). */
  marketplaceUrl?: (() => string | undefined) | undefined;
}

function card(href: string, title: string, text: string): string {
  return `<li><a href="${esc(href)}"><strong>${esc(title)}</strong><span>${esc(text)}</span></a></li>`;
}

export function landingHtml(assets: { css: string; icon: string }, marketplaceUrl: string | undefined): string {
  const market = marketplaceUrl
    ? card(`${marketplaceUrl.replace(/\/$/, '')}/api/v1/resources`, 'Marketplace', 'Discover and buy pay-per-call x402 APIs.')
    : card('/docs/marketplace', 'Marketplace', 'Pay-per-call x402 APIs, served on MARKETPLACE_PORT.');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>ANM Pay</title>
<link rel="icon" href="${esc(assets.icon)}" type="image/svg+xml">
<link rel="stylesheet" href="${esc(assets.css)}">
</head>
<body>
<main class="landing">
<h1>ANM Pay</h1>
<p>Merchant payments in ANM with a hosted checkout, webhooks and a REST API, and an x402 marketplace for pay-per-call APIs.</p>
<ul>
${card('/dashboard', 'Dashboard', 'Merchants: payments, refunds, keys, webhooks and payouts.')}
${card('/docs', 'Documentation', 'Getting started, the API reference and integration guides.')}
${card('/ops', 'Operator console', 'Operators: live actors, statecharts, journals and backlogs.')}
${market}
</ul>
<p><a href="/docs/getting-started">Getting started</a> · <a href="/api/v1/openapi.json">OpenAPI document</a> · <a href="/healthz">Health</a></p>
</main>
</body>
</html>
`;
}

export default async function landing(app: FastifyInstance, o: LandingOptions): Promise<void> {
  app.get('/', async (_req, reply) => {
    const b = await uiBundle();
    const html = landingHtml({ css: b.docsCss.path, icon: b.icon.path }, o.marketplaceUrl?.());
    return reply.code(200).headers(docsHeaders()).send(html);
  });
}
