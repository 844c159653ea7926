/**
 * Pure rules of the invoice: money in minor units (bigint), guards as functions of context
 * and event. ANM prices have 9 decimal places, fiat 2, as on intent creation.
 */
import type { InvoiceContext } from './context.ts';
import type { InvoiceEvent, LineItem } from './events.ts';

export const decimalsOf = (currency: string): number => (currency === 'ANM' ? 9 : 2);

/** A decimal string in units of 10^-decimals; null when it has more places than allowed. */
export function toMinor(s: string, decimals: number): bigint | null {
  const m = /^([0-9]+)(?:\.([0-9]+))?$/.exec(s);
  if (!m) return null;
  const frac = m[2] ?? '';
  if (frac.length > decimals) return null;
  return BigInt((m[1] ?? '0') + frac.padEnd(decimals, '0'));
}

/** Minor units back to the shortest exact decimal string (`12.5`, `3`). */
export function fromMinor(units: bigint, decimals: number): string {
  const s = units.toString().padStart(decimals + 1, '0');
  const whole = s.slice(0, s.length - decimals);
  const frac = s.slice(s.length - decimals).replace(/0+$/, '');
  return frac ? `${whole}.${frac}` : whole;
}

export function invoiceTotalMinor(lines: readonly LineItem[], currency: string): bigint {
  const d = decimalsOf(currency);
  return lines.reduce((sum, l) => sum + BigInt(l.quantity) * (toMinor(l.unit_price, d) ?? 0n), 0n);
}

export function invoiceTotal(lines: readonly LineItem[], currency: string): string {
  return fromMinor(invoiceTotalMinor(lines, currency), decimalsOf(currency));
}

type E<T extends InvoiceEvent['type']> = Extract<InvoiceEvent, { type: T }>;

/** The next intent in order: a retry of the same attempt (racing payers) is a duplicate, an older one is stale. */
export const attachesNext = (c: InvoiceContext, e: E<'invoice.attach_intent'>): boolean => e.attempt === c.intents.length && !c.intents.includes(e.intent_id);

/** A settlement of an intent made for this invoice (a late payment on an older one counts too). */
export const ownIntent = (c: InvoiceContext, e: E<'intent.paid'>): boolean => c.intents.includes(e.intent_id);

/** A settled intent not yet on record as an extra payment. */
export const newExtraPayment = (c: InvoiceContext, e: E<'intent.paid'>): boolean =>
  c.intents.includes(e.intent_id) && e.intent_id !== c.paid_by && !c.extra_payments.includes(e.intent_id);

/** The reorg reversed the settlement that paid the invoice. */
export const reversesPayment = (c: InvoiceContext, e: E<'intent.reorged'>): boolean => e.intent_id === c.paid_by;

/** A notice older than one already applied about the same intent (positions, ADR 0016). */
export const staleNotice = (c: InvoiceContext, e: E<'intent.paid'> | E<'intent.reorged'>): boolean => {
  const seen = c.notice_pos[e.intent_id];
  return e.pos !== undefined && seen !== undefined && e.pos < seen;
};

/** A positioned notice about one of its intents newer than any applied: recorded even when it moves nothing (ADR 0016). */
export const ownNews = (c: InvoiceContext, e: E<'intent.paid'> | E<'intent.reorged'>): boolean => {
  const seen = c.notice_pos[e.intent_id];
  return c.intents.includes(e.intent_id) && e.pos !== undefined && (seen === undefined || e.pos > seen);
};

/** Overdue is derived, never stored: OPEN and past `due_at` (it stays payable). */
export const isOverdue = (c: InvoiceContext, status: string, now: number): boolean => status === 'OPEN' && c.due_at !== null && now > c.due_at;
