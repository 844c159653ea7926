/**
 * HTML of the hosted checkout: the shell that loads the bundle, with the page's data as JSON
 * in a non-executable script block, a static summary for the moment before the elements
 * upgrade (and for no-JS readers), and the 404/error pages. Every interpolated string goes
 * through `esc` or `jsonForScript`.
 */
import type { CheckoutPageData } from '../../ui/src/types.ts';

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function esc(s: string): string {
  return s.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]!);
}

/**
 * JSON safe inside `<script type="application/json">`: no `<` (so no `</script>` or `<!--`),
 * no `>` or `&`, and the two line separators JavaScript once treated as newlines.
 */
export function jsonForScript(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/>/g, '\\u003e')
    .replace(/&/g, '\\u0026')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

export interface PageAssets {
  js: string;
  css: string;
  icon: string;
}

export function layout(title: string, body: string, assets: Pick<PageAssets, 'css' | 'icon'>, extraHead = '', htmlClass = ''): string {
  return `<!doctype html>
<html lang="en"${htmlClass ? ` class="${esc(htmlClass)}"` : ''}>
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${esc(title)}</title>
<link rel="icon" href="${esc(assets.icon)}" type="image/svg+xml">
<link rel="stylesheet" href="${esc(assets.css)}">
${extraHead}</head>
<body>
${body}
</body>
</html>
`;
}

export function checkoutHtml(data: CheckoutPageData, assets: PageAssets): string {
  const i = data.intent;
  const merchant = data.merchant.name || 'the merchant';
  const summary = `<div class="static">
<h1>Payment to ${esc(merchant)}</h1>
${i.description ? `<p>${esc(i.description)}</p>` : ''}
<dl>
<dt>Amount</dt><dd>${esc(i.anm_amount_formatted)}</dd>
<dt>Status</dt><dd>${esc(data.status.status)}</dd>
<dt>Output 1: ${esc(i.merchant_amount)} nANM to</dt><dd>${esc(i.payment_address)}</dd>
<dt>Output 2: ${esc(i.protocol_fee)} nANM to</dt><dd>${esc(i.treasury_address)}</dd>
<dt>Reference</dt><dd>${esc(i.payment_reference)}</dd>
</dl>
<noscript><p>Live status needs JavaScript; reload the page to see the current status.</p></noscript>
</div>`;
  return layout(
    `Pay ${merchant} · ANM Pay`,
    `<main>
<anm-checkout>${summary}</anm-checkout>
</main>
<script type="application/json" id="anm-checkout-data">${jsonForScript(data)}</script>`,
    assets,
    `<script type="module" src="${esc(assets.js)}"></script>\n`,
    data.embed ? 'embed' : '',
  );
}

export function messageHtml(title: string, message: string, assets: Pick<PageAssets, 'css' | 'icon'>): string {
  return layout(`${title} · ANM Pay`, `<main><div class="notfound"><h1>${esc(title)}</h1><p>${esc(message)}</p></div></main>`, assets);
}
