/**
 * Page-local state of the point of sale (nothing the server decides): the amount being keyed
 * in, its currency and note, and which screen shows. A sale gets its own id when the keypad
 * opens, so a second tap on "Charge" (or a retry after a network error) charges the same
 * intent instead of a second one. A sale the server refused because a unit is gone
 * (`sold_out`) made nothing, so the next Charge is a new sale with a new id.
 */
import { createStore } from '@xstate/store';
import type { CheckoutPageData } from '../types.ts';

export type Screen = 'keypad' | 'charging' | 'sale';

/** A product of the grid (`GET /pos/api/products`): a fixed-price payment link. */
export interface Product {
  link: string;
  title: string;
  amount: string;
  currency: string;
  /** Units neither sold nor held when the grid was read; null or absent: no unit limit. */
  units_left?: number | null;
}

export interface CartLine {
  product: Product;
  quantity: number;
}

export interface Till {
  screen: Screen;
  entry: string;
  /** Products tapped on the grid; when not empty, Charge charges these instead of the keyed amount. */
  cart: CartLine[];
  currency: string;
  note: string;
  saleId: string;
  checkout: CheckoutPageData | null;
  error: string;
}

/** Places after the point: ANM has 9 (nANM), a fiat amount 2. */
export const decimalsOf = (currency: string): number => (currency === 'ANM' ? 9 : 2);
const MAX_DIGITS = 12;

export function newSaleId(): string {
  const b = crypto.getRandomValues(new Uint8Array(12));
  return `sale_${Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('')}`;
}

/** The entry after one key: digits, one point, backspace (`<`) and clear (`C`). */
export function keyed(entry: string, key: string, currency: string): string {
  if (key === 'C') return '';
  if (key === '<') return entry.slice(0, -1);
  if (key === '.') return entry.includes('.') ? entry : `${entry || '0'}.`;
  if (!/^[0-9]$/.test(key)) return entry;
  const [whole = '', frac] = entry.split('.');
  if (frac !== undefined) return frac.length >= decimalsOf(currency) ? entry : entry + key;
  if (whole.length >= MAX_DIGITS) return entry;
  return whole === '0' ? key : entry + key;
}

/** The cart's total as a decimal string in its one currency (display only: the server prices the cart). */
export function cartTotal(cart: readonly CartLine[]): { amount: string; currency: string } | null {
  const first = cart[0];
  if (!first) return null;
  const d = decimalsOf(first.product.currency);
  let total = 0n;
  for (const l of cart) {
    const [w = '0', f = ''] = l.product.amount.split('.');
    total += BigInt(w + f.padEnd(d, '0').slice(0, d)) * BigInt(l.quantity);
  }
  const s = total.toString().padStart(d + 1, '0');
  return { amount: `${s.slice(0, -d)}.${s.slice(-d)}`.replace(/\.?0+$/, ''), currency: first.product.currency };
}

/** How many more of `p` the cart may take: its units left less those already in the cart (Infinity: no limit). */
export function roomFor(cart: readonly CartLine[], p: Product): number {
  const inCart = cart.find((l) => l.product.link === p.link)?.quantity ?? 0;
  return p.units_left === null || p.units_left === undefined ? Infinity : Math.max(0, p.units_left - inCart);
}

/** The cart with one more of `p`; a product in another currency than the cart's, or with no unit left, is not added. */
export function added(cart: readonly CartLine[], p: Product): CartLine[] {
  if (cart[0] && cart[0].product.currency !== p.currency) return [...cart];
  if (roomFor(cart, p) < 1) return [...cart];
  const has = cart.some((l) => l.product.link === p.link);
  return has ? cart.map((l) => (l.product.link === p.link ? { ...l, quantity: Math.min(999, l.quantity + 1) } : l)) : [...cart, { product: p, quantity: 1 }];
}

/** The cart with one less of `link` (gone at zero). */
export const removed = (cart: readonly CartLine[], link: string): CartLine[] =>
  cart.map((l) => (l.product.link === link ? { ...l, quantity: l.quantity - 1 } : l)).filter((l) => l.quantity > 0);

/** True when the entry is an amount above zero the API would take. */
export const chargeable = (entry: string): boolean => /^[0-9]+(\.[0-9]+)?$/.test(entry) && /[1-9]/.test(entry);

export function createTill(currency: string) {
  const context: Till = { screen: 'keypad', entry: '', cart: [], currency, note: '', saleId: newSaleId(), checkout: null, error: '' };
  return createStore({
    context,
    on: {
      key: (ctx, e: { key: string }) => ({ ...ctx, entry: keyed(ctx.entry, e.key, ctx.currency), error: '' }),
      currency: (ctx, e: { currency: string }) => ({ ...ctx, currency: e.currency, entry: '' }),
      note: (ctx, e: { note: string }) => ({ ...ctx, note: e.note }),
      add: (ctx, e: { product: Product }) => ({ ...ctx, cart: added(ctx.cart, e.product), error: '' }),
      remove: (ctx, e: { link: string }) => ({ ...ctx, cart: removed(ctx.cart, e.link) }),
      charging: (ctx) => ({ ...ctx, screen: 'charging' as const, error: '' }),
      charged: (ctx, e: { checkout: CheckoutPageData }) => ({ ...ctx, screen: 'sale' as const, checkout: e.checkout }),
      failed: (ctx, e: { message: string }) => ({ ...ctx, screen: 'keypad' as const, error: e.message }),
      // Nothing was charged: the cart stays for the cashier to fix, under a new sale id.
      refused: (ctx, e: { message: string }) => ({ ...ctx, screen: 'keypad' as const, error: e.message, saleId: newSaleId() }),
      newSale: (ctx) => ({ ...ctx, screen: 'keypad' as const, entry: '', cart: [], note: '', saleId: newSaleId(), checkout: null, error: '' }),
    },
  });
}

export type TillStore = ReturnType<typeof createTill>;
