import { formatAnm } from '../money/money.ts';
import type { RefundContext } from './context.ts';

export type RefundStatus = 'REQUIRES_SIGNATURE' | 'SUBMITTED' | 'CONFIRMING' | 'CONFIRMED' | 'FAILED' | 'CANCELED';

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

/** The Refund resource of the spec, with the full `unsigned_transfer` while a signature is needed. */
export function refundResource(ctx: RefundContext, status: RefundStatus) {
  const needsSignature = status === 'REQUIRES_SIGNATURE';
  return {
    object: 'refund' as const,
    id: ctx.refund_id,
    payment_intent: ctx.payment_intent,
    status,
    amount: ctx.amount,
    amount_formatted: formatAnm(BigInt(ctx.amount)),
    reason: ctx.reason,
    requires_merchant_signature: needsSignature,
    unsigned_transfer: needsSignature
      ? {
          chain_id: ctx.chain_id,
          from: ctx.from,
          to: ctx.to,
          amount: ctx.amount,
          reference: ctx.reference,
          nonce_hint: ctx.nonce_hint,
          signing_payload: ctx.signing_payload,
        }
      : null,
    transaction_hash: ctx.tx_hash,
    confirmations: ctx.confirmations,
    mode: ctx.mode,
    created_at: iso(ctx.created_at),
    completed_at: iso(ctx.completed_at),
  };
}

/** Data of `refund.created`, `refund.completed` and `refund.reorged` webhooks (documented in docs/webhooks.md). */
export function refundWebhookData(ctx: RefundContext, status: RefundStatus) {
  return {
    id: ctx.refund_id,
    payment_intent: ctx.payment_intent,
    status,
    amount: ctx.amount,
    amount_formatted: formatAnm(BigInt(ctx.amount)),
    reason: ctx.reason,
    transaction_hash: ctx.tx_hash,
    // The block makes each completion its own fact: a transfer re-mined after a reorg completes anew (ADR 0033).
    block_height: ctx.block_height,
    block_hash: ctx.block_hash ?? null,
    mode: ctx.mode,
    metadata: ctx.metadata,
  };
}
