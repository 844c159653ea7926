/**
 * The payment-link product page (DESIGN §7): title, description, price, units left when
 * limited, and a Pay button, server-rendered with every merchant-supplied string through `esc`
 * (markup in a title shows as text). A plain form: it works without JavaScript.
 */
import type { PaymentLinkContext } from '../../machines/payment-link/context.ts';
import { unitsLeft } from '../../machines/payment-link/rules.ts';
import { formatAnm, parseDecimalAmount } from '../../machines/money/money.ts';
import type { PublicLink } from '../../runtime/commerce/links.ts';
import { esc, layout, type PageAssets } from '../checkout/html.ts';

function money(amount: string, currency: string): string {
  if (currency !== 'ANM') return `${amount} ${currency}`;
  return formatAnm(parseDecimalAmount(amount, 9) ?? 0n);
}

/** A link's price as people read it: `12.5 ANM`, `10.00 USD`, or a range. */
export function priceText(c: PaymentLinkContext): string {
  return c.price.kind === 'fixed' ? money(c.price.amount, c.price.currency) : `${money(c.price.min_amount, c.price.currency)} – ${money(c.price.max_amount, c.price.currency)}`;
}

export function productHtml(link: Pick<PublicLink, 'snapshot' | 'mode' | 'merchant_name'>, assets: Pick<PageAssets, 'css' | 'icon'>, opts: { action: string; error?: string }): string {
  const c = link.snapshot.context as PaymentLinkContext;
  const left = unitsLeft(c);
  const soldOut = left !== null && left <= 0;
  const price = `<p class="price">${esc(priceText(c))}</p>`;
  const amountField =
    c.price.kind === 'range'
      ? `<label>Amount (${esc(c.price.currency)}) <input name="amount" inputmode="decimal" required value="${esc(c.price.min_amount)}" autocomplete="off"></label>`
      : '';
  const units = left === null ? '' : `<p class="units">${soldOut ? 'Sold out' : `${left} of ${c.units_total} left`}</p>`;
  const test = link.mode === 'test' ? `<p class="test-banner" role="note">Test link: no real ANM moves, and only ${esc(link.merchant_name)} signed in to the dashboard can pay it.</p>` : '';
  const error = opts.error ? `<p class="test-banner" role="alert">${esc(opts.error)}</p>` : '';
  const body = `<main><section class="product">
${test}${error}<p class="merchant">${esc(link.merchant_name)}</p>
<h1>${esc(c.title)}</h1>
${c.description ? `<p class="description">${esc(c.description)}</p>` : ''}
${price}
${units}
<form method="post" action="${esc(opts.action)}">
${amountField}
<button type="submit"${soldOut ? ' disabled' : ''}>${soldOut ? 'Sold out' : 'Pay'}</button>
</form>
</section></main>`;
  return layout(`${c.title} · ${link.merchant_name}`, body, assets);
}
