/** Validation of CreateRefundRequest (spec "CreateRefundRequest"; errors per the spec's table). */
import { parseDecimalAmount } from '../../machines/money/money.ts';
import { AppError } from '../errors.ts';
import { codePoints } from '../../machines/kit/text.ts';
import { isPlainObject, storableString } from '../http/body.ts';

export interface RefundInput {
  paymentIntent: string;
  /** Null: the whole remaining cap. */
  amount: bigint | null;
  reason: string | null;
}

const NANM = /^[0-9]+$/;
const REASON_MAX = 300;
const ALLOWED = new Set(['payment_intent', 'amount', 'amount_nanm', 'reason']);

export function validateRefund(body: unknown): RefundInput {
  if (!isPlainObject(body)) throw new AppError('invalid_request', 'The body must be a JSON object.');
  for (const k of Object.keys(body)) if (!ALLOWED.has(k)) throw new AppError('invalid_request', `Unknown field ${k}.`);
  const { payment_intent: pi, amount, amount_nanm: nanm, reason } = body;
  if (typeof pi !== 'string' || !/^pay_[a-z2-7]{1,64}$/.test(pi)) throw new AppError('invalid_request', 'payment_intent (a pay_ id) is required.');
  if (typeof amount === 'number' || typeof nanm === 'number') throw new AppError('amount_must_be_string');
  if (amount !== undefined && nanm !== undefined) throw new AppError('invalid_body', 'Send either amount or amount_nanm, not both.');
  let value: bigint | null = null;
  if (amount !== undefined) {
    value = typeof amount === 'string' ? parseDecimalAmount(amount, 9) : null;
    if (value === null) throw new AppError('invalid_request', 'amount must be a decimal ANM string greater than zero with at most 9 decimals.');
  } else if (nanm !== undefined) {
    value = typeof nanm === 'string' && NANM.test(nanm) && BigInt(nanm) > 0n ? BigInt(nanm) : null;
    if (value === null) throw new AppError('invalid_request', 'amount_nanm must be an integer nANM string greater than zero.');
  }
  if (reason !== undefined && reason !== null && (typeof reason !== 'string' || !storableString(reason) || codePoints(reason) > REASON_MAX)) {
    throw new AppError('invalid_request', `reason must be a string of at most ${REASON_MAX} characters.`);
  }
  return { paymentIntent: pi, amount: value, reason: typeof reason === 'string' ? reason : null };
}
