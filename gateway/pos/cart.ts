/**
 * The till's product grid and cart (DESIGN §7 "Point of sale"): the merchant's active payment
 * links of the session's mode with a fixed price and no unit limit (a limited link's units
 * are taken as holds by its own Pay page, one unit per intent, so a counter cart never takes
 * them), and a cart's total priced here from the links' snapshots, never from the browser.
 */
import type { PaymentLinkContext } from '../../machines/payment-link/context.ts';
import { parseDecimalAmount } from '../../machines/money/money.ts';
import type { LinkReads } from '../../runtime/commerce/links.ts';
import type { Mode } from '../../runtime/merchant/secrets.ts';
import { AppError } from '../errors.ts';

export interface Product {
  link: string;
  title: string;
  amount: string;
  currency: string;
}

export interface CartLine {
  link: string;
  quantity: number;
}

/** The most links the grid shows. */
const GRID_MAX = 100;

const decimalsOf = (currency: string): number => (currency === 'ANM' ? 9 : 2);

export async function products(links: LinkReads, merchant: string, mode: Mode): Promise<Product[]> {
  const page = await links.list(merchant, mode, GRID_MAX);
  const out: Product[] = [];
  for (const r of page?.rows ?? []) {
    const c = r.snapshot.context as PaymentLinkContext;
    if (r.state !== 'ACTIVE' || c.units_total !== null || c.price.kind !== 'fixed') continue;
    out.push({ link: c.link_id, title: c.title, amount: c.price.amount, currency: c.price.currency });
  }
  return out;
}

/** The cart's total and description, or 400 `invalid_body` naming what does not add up. */
export function priceCart(grid: readonly Product[], lines: readonly CartLine[]): { amount: string; currency: string; description: string } {
  const byId = new Map(grid.map((p) => [p.link, p]));
  let currency: string | null = null;
  let total = 0n;
  const parts: string[] = [];
  for (const l of lines) {
    const p = byId.get(l.link);
    if (!p) throw new AppError('invalid_body', `items: ${l.link} is not an active product of this till.`);
    if (currency !== null && p.currency !== currency) throw new AppError('invalid_body', 'items: every product of one sale must be priced in the same currency.');
    currency = p.currency;
    total += parseDecimalAmount(p.amount, decimalsOf(p.currency))! * BigInt(l.quantity);
    parts.push(`${l.quantity} × ${p.title}`);
  }
  if (currency === null) throw new AppError('invalid_body', 'items: the cart is empty.');
  const d = decimalsOf(currency);
  const s = total.toString().padStart(d + 1, '0');
  const amount = `${s.slice(0, -d)}.${s.slice(-d)}`.replace(/\.?0+$/, '');
  return { amount, currency, description: parts.join(', ').slice(0, 500) };
}
