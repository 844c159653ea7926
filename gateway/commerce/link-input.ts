/**
 * The body of `POST /api/v1/payment-links` (DESIGN §7 names), checked in the order the intent
 * create checks its own fields so the same mistake gets the same code: amounts as on intent
 * creation (strings, decimals per currency), URLs and metadata by the same rules. Pure: the
 * rate source is asked by the handler.
 */
import { codePoints } from '../../machines/kit/text.ts';
import { parseDecimalAmount } from '../../machines/money/money.ts';
import type { LinkPrice } from '../../machines/payment-link/events.ts';
import { AppError } from '../errors.ts';
import { isPlainObject, storableString } from '../http/body.ts';
import { boundedJsonSize } from '../../runtime/storable-json.ts';
import { randomId } from '../../runtime/merchant/secrets.ts';
import { validateCreate } from '../payment-intents/validate.ts';

export interface LinkInput {
  slug: string;
  title: string;
  description: string | null;
  price: LinkPrice;
  units_total: number | null;
  success_url: string | null;
  metadata: Record<string, unknown>;
}

const FIELDS = new Set(['slug', 'title', 'description', 'amount', 'currency', 'min_amount', 'max_amount', 'units_total', 'success_url', 'metadata']);
export const SLUG = /^[a-z0-9-]{1,64}$/;
const TITLE_MAX = 200;
const DESCRIPTION_MAX = 500;
/**
 * The link's own metadata leaves room for the keys a press of Pay adds to its intent's
 * (link-pay.ts: `,"payment_link":"plink_…","hold":"hold_…"`, ids as link-commands.ts and
 * link-pay.ts make them, of one length), so the intent's stays within the spec's 4096 bytes
 * (ADR 0070): 4009 bytes.
 */
const PAY_KEYS_BYTES = JSON.stringify({ payment_link: randomId('plink_'), hold: randomId('hold_') }).length - 1;
export const LINK_METADATA_BYTES = 4096 - PAY_KEYS_BYTES;
/** A unit count past this is a typo, not stock (and keeps counts exact in a JSON number). */
const UNITS_MAX = 1_000_000_000;

function text(v: unknown, field: string, min: number, max: number): string {
  if (typeof v !== 'string' || !storableString(v) || codePoints(v) < min || codePoints(v) > max) {
    throw new AppError('invalid_body', `${field} must be a string of ${min}-${max} characters.`);
  }
  return v;
}

/** One amount, judged exactly as on intent creation; returns it as sent. */
function amount(v: unknown, currency: unknown): { value: string; currency: string } {
  const input = validateCreate({ amount: v, ...(currency === undefined ? {} : { currency }) });
  return { value: input.amount.kind === 'nanm' ? input.amount.requested : input.amount.value, currency: input.currency };
}

function price(body: Record<string, unknown>): LinkPrice {
  const fixed = body.amount !== undefined;
  const range = body.min_amount !== undefined || body.max_amount !== undefined;
  if (fixed === range) throw new AppError('invalid_body', 'Send either amount, or min_amount and max_amount for a customer-chosen amount.');
  if (fixed) {
    const a = amount(body.amount, body.currency);
    return { kind: 'fixed', amount: a.value, currency: a.currency };
  }
  if (body.min_amount === undefined || body.max_amount === undefined) throw new AppError('invalid_body', 'min_amount and max_amount go together.');
  const lo = amount(body.min_amount, body.currency);
  const hi = amount(body.max_amount, body.currency);
  // Both passed their currency's decimals (at most 9), so 9 places compares them exactly.
  if (parseDecimalAmount(lo.value, 9)! > parseDecimalAmount(hi.value, 9)!) throw new AppError('invalid_amount', 'min_amount must not exceed max_amount.');
  return { kind: 'range', min_amount: lo.value, max_amount: hi.value, currency: lo.currency };
}

function urlOrNull(v: unknown): string | null {
  if (v === undefined || v === null) return null;
  return validateCreate({ amount: '1', success_url: v }).success_url;
}

export function validateLink(body: unknown): LinkInput {
  if (!isPlainObject(body)) throw new AppError('invalid_body', 'The body must be a JSON object.');
  const unknown = Object.keys(body).find((k) => !FIELDS.has(k));
  if (unknown !== undefined) throw new AppError('invalid_body', `Unknown field: ${unknown.slice(0, 64)}.`);
  if (typeof body.units_total === 'string') throw new AppError('invalid_body', 'units_total is an integer or null.');
  const units = body.units_total ?? null;
  if (units !== null && !(typeof units === 'number' && Number.isInteger(units) && units >= 1 && units <= UNITS_MAX)) {
    throw new AppError('invalid_body', `units_total must be an integer 1-${UNITS_MAX}, or null for unlimited.`);
  }
  const p = price(body);
  if (typeof body.slug !== 'string' || !SLUG.test(body.slug)) throw new AppError('invalid_body', 'slug must match [a-z0-9-]{1,64}.');
  const metadata = body.metadata === undefined ? {} : validateCreate({ amount: '1', metadata: body.metadata }).metadata;
  if (boundedJsonSize(metadata, LINK_METADATA_BYTES) === null) {
    throw new AppError('invalid_metadata', `A payment link's metadata is at most ${LINK_METADATA_BYTES} bytes serialized: its intents add payment_link and hold within the 4096.`);
  }
  return {
    slug: body.slug,
    title: text(body.title, 'title', 1, TITLE_MAX),
    description: body.description === undefined || body.description === null ? null : text(body.description, 'description', 0, DESCRIPTION_MAX),
    price: p,
    units_total: units,
    success_url: urlOrNull(body.success_url),
    metadata,
  };
}
