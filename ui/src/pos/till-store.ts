/**
 * Page-local state of the point of sale (nothing the server decides): the amount being keyed
 * in, its currency and note, and which screen shows. A sale gets its own id when the keypad
 * opens, so a second tap on "Charge" (or a retry after a network error) charges the same
 * intent instead of a second one.
 */
import { createStore } from '@xstate/store';
import type { CheckoutPageData } from '../types.ts';

export type Screen = 'keypad' | 'charging' | 'sale';

export interface Till {
  screen: Screen;
  entry: string;
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

/** True when the entry is an amount above zero the API would take. */
export const chargeable = (entry: string): boolean => /^[0-9]+(\.[0-9]+)?$/.test(entry) && /[1-9]/.test(entry);

export function createTill(currency: string) {
  const context: Till = { screen: 'keypad', entry: '', currency, note: '', saleId: newSaleId(), checkout: null, error: '' };
  return createStore({
    context,
    on: {
      key: (ctx, e: { key: string }) => ({ ...ctx, entry: keyed(ctx.entry, e.key, ctx.currency), error: '' }),
      currency: (ctx, e: { currency: string }) => ({ ...ctx, currency: e.currency, entry: '' }),
      note: (ctx, e: { note: string }) => ({ ...ctx, note: e.note }),
      charging: (ctx) => ({ ...ctx, screen: 'charging' as const, error: '' }),
      charged: (ctx, e: { checkout: CheckoutPageData }) => ({ ...ctx, screen: 'sale' as const, checkout: e.checkout }),
      failed: (ctx, e: { message: string }) => ({ ...ctx, screen: 'keypad' as const, error: e.message }),
      newSale: (ctx) => ({ ...ctx, screen: 'keypad' as const, entry: '', note: '', saleId: newSaleId(), checkout: null, error: '' }),
    },
  });
}

export type TillStore = ReturnType<typeof createTill>;
