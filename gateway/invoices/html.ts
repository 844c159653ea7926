/**
 * HTML of the hosted invoice page (`/i/{token}`): server-rendered, no script at all, every
 * interpolated string through `esc` so markup in titles, names and line items is text.
 */
import type { InvoiceContext } from '../../machines/invoice/context.ts';
import { decimalsOf, fromMinor, isOverdue, toMinor } from '../../machines/invoice/rules.ts';
import { formatAnm } from '../../machines/money/money.ts';
import { esc, layout, type PageAssets } from '../checkout/html.ts';

/** `1,234.5 ANM` for ANM (DESIGN §4 "Amount display"); `12.50 USD` for fiat. */
export function money(amount: string, currency: string): string {
  const units = toMinor(amount, decimalsOf(currency)) ?? 0n;
  if (currency === 'ANM') return formatAnm(units);
  const s = fromMinor(units, 2);
  const [whole = '0', frac = ''] = s.split('.');
  return `${whole.replace(/\B(?=(\d{3})+(?!\d))/g, ',')}.${frac.padEnd(2, '0')} ${currency}`;
}

const DATE = new Intl.DateTimeFormat('en-GB', { day: 'numeric', month: 'long', year: 'numeric', timeZone: 'UTC' });

const CLOSED: Record<string, string> = {
  PAID: 'This invoice is paid. Thank you.',
  VOID: 'This invoice was voided by the merchant and cannot be paid.',
  UNCOLLECTIBLE: 'This invoice is closed and cannot be paid here. Contact the merchant.',
};

export function invoiceHtml(c: InvoiceContext, status: string, opts: { merchantName: string; now: number; assets: Pick<PageAssets, 'css' | 'icon'>; notice?: string }): string {
  const overdue = isOverdue(c, status, opts.now);
  const merchant = opts.merchantName || 'the merchant';
  const rows = c.line_items
    .map((l) => {
      const line = fromMinor(BigInt(l.quantity) * (toMinor(l.unit_price, decimalsOf(c.currency)) ?? 0n), decimalsOf(c.currency));
      return `<tr><td>${esc(l.description)}</td><td class="num">${l.quantity}</td><td class="num">${esc(money(l.unit_price, c.currency))}</td><td class="num">${esc(money(line, c.currency))}</td></tr>`;
    })
    .join('\n');
  const badge = overdue ? `<span class="badge overdue">Overdue</span>` : `<span class="badge ${esc(status)}">${esc(status)}</span>`;
  const action =
    status === 'OPEN'
      ? `<form method="post" action="/i/${esc(c.token)}/pay"><button type="submit">Pay ${esc(money(c.total, c.currency))}</button></form>`
      : `<p class="closed">${esc(CLOSED[status] ?? 'This invoice cannot be paid.')}</p>`;
  const body = `<main><section class="invoice">
<h1>Invoice ${esc(c.number ?? '')} from ${esc(merchant)}</h1>
<p class="meta">${badge}${c.due_at !== null ? ` Due ${esc(DATE.format(c.due_at))}` : ''}</p>
${opts.notice ? `<p class="closed">${esc(opts.notice)}</p>` : ''}
${c.customer_name || c.customer_email ? `<p>Billed to ${esc([c.customer_name, c.customer_email].filter(Boolean).join(' · '))}</p>` : ''}
<table>
<thead><tr><th>Item</th><th class="num">Qty</th><th class="num">Unit price</th><th class="num">Amount</th></tr></thead>
<tbody>
${rows}
</tbody>
<tfoot><tr><td colspan="3">Total</td><td class="num" data-total>${esc(money(c.total, c.currency))}</td></tr></tfoot>
</table>
${c.memo ? `<p class="memo">${esc(c.memo)}</p>` : ''}
${c.mode === 'test' ? '<p class="meta">Test mode: pay with test-network ANM only.</p>' : ''}
${action}
</section></main>`;
  return layout(`Invoice ${c.number ?? ''} · ${merchant} · ANM Pay`, body, opts.assets);
}
