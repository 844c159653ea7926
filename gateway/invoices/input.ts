/**
 * The body of `POST /api/v1/invoices` (and the dashboard's create), checked with the spec's
 * codes where one applies: an amount sent as a JSON number is `amount_must_be_string`, a bad
 * price `invalid_amount`, an unknown fiat code `currency_unsupported` (checked by the caller
 * against the rate source), metadata `invalid_metadata`; anything else malformed `invalid_body`.
 */
import { codePoints } from '../../machines/kit/text.ts';
import { INVOICE_LIMITS, LINE_ITEMS_MAX, type LineItem } from '../../machines/invoice/events.ts';
import { decimalsOf, invoiceTotalMinor, toMinor } from '../../machines/invoice/rules.ts';
import { AppError } from '../errors.ts';
import { boundedJsonSize, isPlainObject, storableString } from '../http/body.ts';
import { isCalendarDate, isCalendarDateTime } from '../http/calendar.ts';
import { MAX_NANM } from '../payment-intents/validate.ts';

export interface InvoiceInput {
  customer_name: string | null;
  customer_email: string | null;
  line_items: LineItem[];
  currency: string;
  memo: string | null;
  /** Unix milliseconds. */
  due_at: number | null;
  metadata: Record<string, unknown>;
}

const FIELDS = new Set(['customer_name', 'customer_email', 'line_items', 'currency', 'memo', 'due_at', 'metadata']);
const ITEM_FIELDS = new Set(['description', 'quantity', 'unit_price']);
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

function text(v: unknown, field: string, min: number, max: number): string | null {
  if (v === undefined || v === null) return null;
  if (typeof v !== 'string' || !storableString(v) || codePoints(v) < min || codePoints(v) > max) {
    throw new AppError('invalid_body', `${field} must be a string of ${min}-${max} characters.`);
  }
  return v;
}

function dueAt(v: unknown): number | null {
  if (v === undefined || v === null) return null;
  const bad = new AppError('invalid_body', 'due_at must be an RFC 3339 date-time (or a date, due at its end in UTC).');
  if (typeof v !== 'string') throw bad;
  // A plain date is due at the end of that day, UTC.
  const ms = isCalendarDate(v) ? Date.parse(`${v}T23:59:59Z`) : isCalendarDateTime(v) ? Date.parse(v) : NaN;
  if (!Number.isFinite(ms) || ms < 0) throw bad;
  return ms;
}

function currencyOf(v: unknown): string {
  if (v === undefined) return 'ANM';
  if (typeof v !== 'string') throw new AppError('invalid_body', 'currency must be a string.');
  const c = v.toUpperCase();
  if (c !== 'ANM' && !/^[A-Z]{3}$/.test(c)) throw new AppError('currency_unsupported');
  return c;
}

function item(v: unknown, i: number, currency: string): LineItem {
  if (!isPlainObject(v)) throw new AppError('invalid_body', `line_items[${i}] must be an object.`);
  const unknown = Object.keys(v).find((k) => !ITEM_FIELDS.has(k));
  if (unknown !== undefined) throw new AppError('invalid_body', `line_items[${i}]: unknown field ${unknown.slice(0, 64)}.`);
  const description = text(v.description, `line_items[${i}].description`, 1, INVOICE_LIMITS.description);
  if (description === null) throw new AppError('invalid_body', `line_items[${i}].description is required.`);
  const q = v.quantity;
  if (typeof q !== 'number' || !Number.isInteger(q) || q < 1 || q > INVOICE_LIMITS.quantity) {
    throw new AppError('invalid_body', `line_items[${i}].quantity must be an integer from 1 to ${INVOICE_LIMITS.quantity}.`);
  }
  const p = v.unit_price;
  if (typeof p === 'number') throw new AppError('amount_must_be_string', `line_items[${i}].unit_price must be a decimal string.`);
  if (typeof p !== 'string' || p.length > 40) throw new AppError('invalid_amount', `line_items[${i}].unit_price must be a decimal string.`);
  const units = toMinor(p, decimalsOf(currency));
  if (units === null || units <= 0n) throw new AppError('invalid_amount', `line_items[${i}].unit_price must be greater than zero with at most ${decimalsOf(currency)} decimal places.`);
  return { description, quantity: q, unit_price: p };
}

export function validateInvoice(body: unknown): InvoiceInput {
  if (!isPlainObject(body)) throw new AppError('invalid_body', 'The body must be a JSON object.');
  const unknown = Object.keys(body).find((k) => !FIELDS.has(k));
  if (unknown !== undefined) throw new AppError('invalid_body', `Unknown field: ${unknown.slice(0, 64)}.`);
  const currency = currencyOf(body.currency);
  const lines = body.line_items;
  if (!Array.isArray(lines) || lines.length < 1 || lines.length > LINE_ITEMS_MAX) {
    throw new AppError('invalid_body', `line_items must be an array of 1-${LINE_ITEMS_MAX} items.`);
  }
  const line_items = lines.map((l, i) => item(l, i, currency));
  // ANM totals are charged as nANM: the same ceiling as an intent's amount.
  if (currency === 'ANM' && invoiceTotalMinor(line_items, currency) > MAX_NANM) throw new AppError('invalid_amount', 'The invoice total is too large.');
  const email = text(body.customer_email, 'customer_email', 3, INVOICE_LIMITS.customer_email);
  if (email !== null && !EMAIL.test(email)) throw new AppError('invalid_body', 'customer_email must be an email address.');
  const metadata = body.metadata === undefined ? {} : body.metadata;
  if (!isPlainObject(metadata) || boundedJsonSize(metadata, 4096) === null) throw new AppError('invalid_metadata');
  return {
    customer_name: text(body.customer_name, 'customer_name', 1, INVOICE_LIMITS.customer_name),
    customer_email: email,
    line_items,
    currency,
    memo: text(body.memo, 'memo', 0, INVOICE_LIMITS.memo),
    due_at: dueAt(body.due_at),
    metadata,
  };
}

