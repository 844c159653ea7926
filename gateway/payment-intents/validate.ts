/**
 * CreatePaymentIntentRequest and the list query, checked in a fixed order so each spec code
 * wins where it applies; the zod schema is the final word on shape. Pure: the fiat quote and
 * the merchant's defaults are applied by the handler.
 */
import { parseDecimalAmount } from '../../machines/money/money.ts';
import { PAYMENT_INTENT_STATUSES } from '../../machines/payment-intent/view.ts';
import { AppError } from '../errors.ts';
import { codePoints } from '../../machines/kit/text.ts';
import { boundedJsonSize, hasControlOrSpace, isPlainObject, storableString } from '../http/body.ts';
import { CreatePaymentIntentRequest, LIMITS, ListPaymentIntentsQuery, NOT_SETTABLE } from '../schemas/payment-intent.ts';

/** Upper bound on a charge: 2^63 - 1 nANM (ADR 0006); larger numbers are typos, not prices. */
export const MAX_NANM = 2n ** 63n - 1n;
export const ANM_DECIMALS = 9;
export const FIAT_DECIMALS = 2;

export type ChargeAmount = { kind: 'nanm'; nanm: bigint; requested: string } | { kind: 'decimal'; value: string };

export interface CreateInput {
  currency: string;
  amount: ChargeAmount;
  merchant_order_id: string | null;
  description: string | null;
  metadata: Record<string, unknown>;
  success_url: string | null;
  cancel_url: string | null;
}

const KNOWN = new Set(Object.keys(CreatePaymentIntentRequest.shape));

function present(body: Record<string, unknown>, k: string): boolean {
  return Object.prototype.hasOwnProperty.call(body, k);
}

function checkUrl(v: unknown): string | null {
  if (v === null || v === undefined) return null;
  const bad = new AppError('invalid_url');
  if (typeof v !== 'string' || codePoints(v) > LIMITS.url || !storableString(v) || hasControlOrSpace(v)) throw bad;
  let u: URL;
  try {
    u = new URL(v);
  } catch {
    throw bad;
  }
  if ((u.protocol !== 'http:' && u.protocol !== 'https:') || !u.hostname) throw bad;
  return v;
}

function optionalText(body: Record<string, unknown>, field: 'merchant_order_id' | 'description', min: number, max: number): string | null {
  const v = body[field];
  if (v === undefined || v === null) return null;
  if (typeof v !== 'string' || !storableString(v) || codePoints(v) < min || codePoints(v) > max) {
    throw new AppError('invalid_body', `${field} must be a string of ${min}-${max} characters.`);
  }
  return v;
}

function checkMetadata(v: unknown): Record<string, unknown> {
  if (v === undefined) return {};
  // Size and depth in one walk that stops at either limit (no recursion, no JSON.stringify of a deep value).
  if (!isPlainObject(v) || boundedJsonSize(v, LIMITS.metadataBytes) === null) throw new AppError('invalid_metadata');
  return v;
}

function checkAmount(body: Record<string, unknown>, currency: string): ChargeAmount {
  const hasAmount = present(body, 'amount');
  const hasNanm = present(body, 'amount_nanm');
  if (typeof body.amount === 'number' || typeof body.amount_nanm === 'number') throw new AppError('amount_must_be_string');
  if (hasAmount && hasNanm) throw new AppError('invalid_body', 'Send exactly one of amount and amount_nanm, not both.');
  if (!hasAmount && !hasNanm) throw new AppError('invalid_body', 'One of amount and amount_nanm is required.');
  if (hasNanm) {
    if (currency !== 'ANM') throw new AppError('invalid_body', 'amount_nanm is valid only with currency ANM.');
    const v = body.amount_nanm;
    if (typeof v !== 'string' || !/^[0-9]{1,30}$/.test(v)) throw new AppError('invalid_amount');
    const n = BigInt(v);
    if (n <= 0n || n > MAX_NANM) throw new AppError('invalid_amount');
    return { kind: 'nanm', nanm: n, requested: n.toString() };
  }
  const v = body.amount;
  const decimals = currency === 'ANM' ? ANM_DECIMALS : FIAT_DECIMALS;
  if (typeof v !== 'string' || v.length > 40) throw new AppError('invalid_amount');
  const units = parseDecimalAmount(v, decimals);
  if (units === null) throw new AppError('invalid_amount');
  if (currency === 'ANM' && units > MAX_NANM) throw new AppError('invalid_amount');
  return currency === 'ANM' ? { kind: 'nanm', nanm: units, requested: v } : { kind: 'decimal', value: v };
}

function checkCurrency(v: unknown): string {
  if (v === undefined) return 'ANM';
  if (typeof v !== 'string') throw new AppError('invalid_body', 'currency must be a string.');
  const c = v.toUpperCase();
  // Anything but ANM needs a rate; the handler asks the rate source for three-letter codes.
  if (c !== 'ANM' && !/^[A-Z]{3}$/.test(c)) throw new AppError('currency_unsupported');
  return c;
}

export function validateCreate(body: unknown): CreateInput {
  if (!isPlainObject(body)) throw new AppError('invalid_body', 'The body must be a JSON object.');
  for (const f of NOT_SETTABLE) if (present(body, f)) throw new AppError('field_not_settable', `${f} is determined by the service.`);
  const unknown = Object.keys(body).find((k) => !KNOWN.has(k));
  if (unknown !== undefined) throw new AppError('invalid_body', `Unknown field: ${unknown.slice(0, 64)}.`);
  const currency = checkCurrency(body.currency);
  const amount = checkAmount(body, currency);
  const input: CreateInput = {
    currency,
    amount,
    metadata: checkMetadata(body.metadata),
    success_url: checkUrl(body.success_url),
    cancel_url: checkUrl(body.cancel_url),
    merchant_order_id: optionalText(body, 'merchant_order_id', 1, LIMITS.merchant_order_id),
    description: optionalText(body, 'description', 0, LIMITS.description),
  };
  if (!CreatePaymentIntentRequest.safeParse(body).success) throw new AppError('invalid_body');
  return input;
}

export interface ListInput {
  limit: number;
  status: string | undefined;
  starting_after: string | undefined;
  merchant_order_id: string | undefined;
}

export function validateList(query: unknown): ListInput {
  const q = isPlainObject(query) ? query : {};
  const status = q.status;
  if (status !== undefined && (typeof status !== 'string' || !(PAYMENT_INTENT_STATUSES as readonly string[]).includes(status))) {
    throw new AppError('invalid_status');
  }
  const parsed = ListPaymentIntentsQuery.safeParse(q);
  if (!parsed.success) throw new AppError('bad_request', 'Query parameters: limit is an integer 1-100; status, starting_after and merchant_order_id are single strings; nothing else is accepted.');
  const p = parsed.data;
  return { limit: p.limit ?? LIMITS.listDefault, status: p.status, starting_after: p.starting_after, merchant_order_id: p.merchant_order_id };
}
