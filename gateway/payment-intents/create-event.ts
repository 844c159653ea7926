/**
 * The `intent.create` command every surface that makes a payment intent sends (the API's
 * `POST /api/v1/payment-intents`, the point of sale, payment links, invoices): the body checked
 * by the API's own rules, the fiat amount quoted, and the event filled in the same way, so an
 * intent is the same whichever page made it.
 */
import { paymentReference } from '../../machines/chain/reference.ts';
import { fiatToNanm } from '../../machines/money/money.ts';
import { DEFAULT_MONITOR_WINDOW_MS, DEFAULT_REQUIRED_CONFIRMATIONS, type IntentCreateEvent } from '../../machines/payment-intent/events.ts';
import { poolBytes } from '../../runtime/merchant/secrets.ts';
import type { Mode } from '../../runtime/merchant/secrets.ts';
import type { Quote } from '../../runtime/rates/rate-source.ts';
import type { GatewayDeps } from '../deps.ts';
import { AppError } from '../errors.ts';
import { MAX_NANM, validateCreate, type CreateInput } from './validate.ts';

/** Spec: an intent is payable for 30 minutes. */
export const INTENT_EXPIRY_MS = 30 * 60 * 1000;

export interface PreparedCreate {
  input: CreateInput;
  quote: Quote | null;
  anm: bigint;
  /** The body as sent: its canonical form is the request's fingerprint. */
  raw: unknown;
}

/** Validates a create body and quotes a fiat amount (400 `invalid_*`, `currency_unsupported`). */
export async function prepareCreate(d: Pick<GatewayDeps, 'rates'>, raw: unknown): Promise<PreparedCreate> {
  const input = validateCreate(raw);
  if (input.amount.kind === 'nanm') return { input, quote: null, anm: input.amount.nanm, raw };
  const quote = await d.rates.quote(input.currency);
  if (!quote) throw new AppError('currency_unsupported');
  const anm = fiatToNanm(input.amount.value, quote.rate);
  if (anm > MAX_NANM) throw new AppError('invalid_amount');
  return { input, quote, anm, raw };
}

export interface IntentOwner {
  merchant: string;
  mode: Mode;
  payoutAddress: string;
  successUrl: string | null;
  cancelUrl: string | null;
}

export function intentCreateEvent(d: Pick<GatewayDeps, 'treasury'>, intentId: string, owner: IntentOwner, p: PreparedCreate, at: number): IntentCreateEvent {
  return {
    type: 'intent.create',
    id: `${intentId}:create`,
    at,
    intent_id: intentId,
    merchant_id: owner.merchant,
    mode: owner.mode,
    currency: p.input.currency,
    requested_amount: p.input.amount.kind === 'nanm' ? p.input.amount.requested : p.input.amount.value,
    anm_amount: p.anm.toString(),
    merchant_order_id: p.input.merchant_order_id,
    description: p.input.description,
    metadata: p.input.metadata,
    success_url: p.input.success_url ?? owner.successUrl,
    cancel_url: p.input.cancel_url ?? owner.cancelUrl,
    payment_address: owner.payoutAddress,
    treasury_address: d.treasury[owner.mode],
    payment_reference: paymentReference(poolBytes(20)),
    expires_at: at + INTENT_EXPIRY_MS,
    required_confirmations: DEFAULT_REQUIRED_CONFIRMATIONS,
    monitor_window_ms: DEFAULT_MONITOR_WINDOW_MS,
    quote: p.quote,
  };
}
