/**
 * The till's product grid and cart (DESIGN §7 "Point of sale"): the merchant's active payment
 * links of the login's mode with a fixed price, with the units a limited link has left
 * (its own counts: ADR 0039), and a cart's total priced here from the links' snapshots, never
 * from the browser. The units of limited products are taken when the cart is charged
 * (holds.ts); the count shown here is only what the till greys out.
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
  /** Units neither sold nor held; null for a link without a unit limit. */
  units_left: number | null;
}

export interface CartLine {
  link: string;
  quantity: number;
}

/** The most links the grid shows. */
const GRID_MAX = 100;
/** The most units of limited products one sale holds: each is a hold actor of its own. */
export const MAX_HELD_UNITS = 20;

const decimalsOf = (currency: string): number => (currency === 'ANM' ? 9 : 2);

export async function products(links: LinkReads, merchant: string, mode: Mode): Promise<Product[]> {
  const page = await links.list(merchant, mode, GRID_MAX);
  const out: Product[] = [];
  for (const r of page?.rows ?? []) {
    const c = r.snapshot.context as PaymentLinkContext;
    if (r.state !== 'ACTIVE' || c.price.kind !== 'fixed') continue;
    const left = c.units_total === null ? null : Math.max(0, c.units_total - c.units_held - c.units_sold);
    out.push({ link: c.link_id, title: c.title, amount: c.price.amount, currency: c.price.currency, units_left: left });
  }
  return out;
}

/** A cart's lines of limited products: the units to hold when it is charged. */
export interface HeldLine {
  link: string;
  title: string;
  quantity: number;
}

/**
 * The cart's total, description and limited lines, or 400 `invalid_body` naming what does not
 * add up. Whether units are left is not judged here: the holds taken at the charge decide.
 */
export function priceCart(grid: readonly Product[], lines: readonly CartLine[]): { amount: string; currency: string; description: string; held: HeldLine[] } {
  const byId = new Map(grid.map((p) => [p.link, p]));
  let currency: string | null = null;
  let total = 0n;
  const parts: string[] = [];
  const held = new Map<string, HeldLine>();
  for (const l of lines) {
    const p = byId.get(l.link);
    if (!p) throw new AppError('invalid_body', `items: ${l.link} is not an active product of this till.`);
    if (currency !== null && p.currency !== currency) throw new AppError('invalid_body', 'items: every product of one sale must be priced in the same currency.');
    currency = p.currency;
    total += parseDecimalAmount(p.amount, decimalsOf(p.currency))! * BigInt(l.quantity);
    parts.push(`${l.quantity} × ${p.title}`);
    if (p.units_left !== null) {
      const h = held.get(p.link) ?? { link: p.link, title: p.title, quantity: 0 };
      h.quantity += l.quantity;
      held.set(p.link, h);
    }
  }
  if (currency === null) throw new AppError('invalid_body', 'items: the cart is empty.');
  if ([...held.values()].reduce((n, h) => n + h.quantity, 0) > MAX_HELD_UNITS) {
    throw new AppError('invalid_body', `items: at most ${MAX_HELD_UNITS} units of products with a unit limit in one sale.`);
  }
  const d = decimalsOf(currency);
  const s = total.toString().padStart(d + 1, '0');
  const amount = `${s.slice(0, -d)}.${s.slice(-d)}`.replace(/\.?0+$/, '');
  return { amount, currency, description: parts.join(', ').slice(0, 500), held: [...held.values()] };
}
