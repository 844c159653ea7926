import { FEE_BPS, formatAnm } from '../money/money.ts';
import type { PaymentIntentContext } from './context.ts';

/**
 * Renders the snapshot as the spec's public shapes. Pages and the API render only through
 * these, so a field cannot drift between the REST resource, webhooks and checkout.
 */

export type PaymentIntentStatus =
  | 'CREATED'
  | 'AWAITING_PAYMENT'
  | 'PAYMENT_DETECTED'
  | 'CONFIRMING'
  | 'PAID'
  | 'EXPIRED'
  | 'UNDERPAID'
  | 'OVERPAID'
  | 'FAILED'
  | 'REFUNDED'
  | 'PARTIALLY_REFUNDED';

export const PAYMENT_INTENT_STATUSES: readonly PaymentIntentStatus[] = [
  'CREATED',
  'AWAITING_PAYMENT',
  'PAYMENT_DETECTED',
  'CONFIRMING',
  'PAID',
  'EXPIRED',
  'UNDERPAID',
  'OVERPAID',
  'FAILED',
  'REFUNDED',
  'PARTIALLY_REFUNDED',
];

/** Spec "PaymentIntent" resource, field for field. */
export type PaymentIntentResource = {
  object: 'payment_intent';
  id: string;
  status: string;
  mode: 'live' | 'test';
  currency: string;
  requested_amount: string | null;
  anm_amount: string;
  anm_amount_formatted: string;
  merchant_amount: string;
  protocol_fee: string;
  protocol_fee_bps: number;
  merchant_order_id: string | null;
  description: string | null;
  payment_address: string;
  payment_reference: string;
  checkout_url: string;
  transaction_hash: string | null;
  confirmations: number;
  required_confirmations: number;
  metadata: Record<string, unknown>;
  created_at: string | null;
  expires_at: string | null;
  completed_at: string | null;
};

/** Spec "Payment event data", plus the creation metadata echoed on every webhook. */
export type PaymentEventData = {
  id: string;
  status: string;
  mode: 'live' | 'test';
  currency: string;
  merchant_order_id: string | null;
  amount_nanm: string;
  merchant_amount: string;
  protocol_fee: string;
  protocol_fee_bps: number;
  payment_reference: string;
  transaction_hash: string | null;
  block_height: number | null;
  confirmations: number;
  required_confirmations: number;
  reason: string | null;
  metadata: Record<string, unknown>;
};

function iso(ms: number | null): string | null {
  return ms === null ? null : new Date(ms).toISOString();
}

export function toResource(ctx: PaymentIntentContext, status: string, opts: { baseUrl: string }): PaymentIntentResource {
  return {
    object: 'payment_intent',
    id: ctx.intent_id,
    status,
    mode: ctx.mode,
    currency: ctx.currency,
    requested_amount: ctx.requested_amount,
    anm_amount: ctx.anm_amount,
    anm_amount_formatted: formatAnm(BigInt(ctx.anm_amount)),
    merchant_amount: ctx.merchant_amount,
    protocol_fee: ctx.protocol_fee,
    protocol_fee_bps: FEE_BPS,
    merchant_order_id: ctx.merchant_order_id,
    description: ctx.description,
    payment_address: ctx.payment_address,
    payment_reference: ctx.payment_reference,
    checkout_url: `${opts.baseUrl.replace(/\/+$/, '')}/c/${ctx.intent_id}`,
    transaction_hash: ctx.tx?.hash ?? null,
    confirmations: ctx.confirmations,
    required_confirmations: ctx.required_confirmations,
    metadata: ctx.metadata,
    created_at: iso(ctx.created_at),
    expires_at: iso(ctx.expires_at),
    completed_at: iso(ctx.completed_at),
  };
}

/**
 * Webhook `data`. `extra` overrides fields the context no longer holds at emission time
 * (the reason, or the depth of a settlement a reorg just reversed).
 */
export function webhookData(ctx: PaymentIntentContext, status: string, extra: Partial<Pick<PaymentEventData, 'reason' | 'confirmations'>> = {}): PaymentEventData {
  return {
    id: ctx.intent_id,
    status,
    mode: ctx.mode,
    currency: ctx.currency,
    merchant_order_id: ctx.merchant_order_id,
    amount_nanm: ctx.anm_amount,
    merchant_amount: ctx.merchant_amount,
    protocol_fee: ctx.protocol_fee,
    protocol_fee_bps: FEE_BPS,
    payment_reference: ctx.payment_reference,
    transaction_hash: ctx.tx?.hash ?? null,
    block_height: ctx.tx?.block_height ?? null,
    confirmations: extra.confirmations ?? ctx.confirmations,
    required_confirmations: ctx.required_confirmations,
    reason: extra.reason ?? null,
    metadata: ctx.metadata,
  };
}
