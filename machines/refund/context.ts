import type { RefundCreateEvent } from './events.ts';

export interface RefundContext {
  refund_id: string;
  payment_intent: string;
  merchant_id: string;
  mode: 'live' | 'test';
  amount: string;
  reason: string | null;
  chain_id: number;
  from: string;
  to: string;
  reference: string;
  nonce_hint: string | null;
  signing_payload: string | null;
  metadata: Record<string, unknown>;
  required_confirmations: number;
  created_at: number;
  tx_hash: string | null;
  block_height: number | null;
  confirmations: number;
  completed_at: number | null;
  failure: string | null;
}

export function initialRefundContext(e: RefundCreateEvent): RefundContext {
  return {
    refund_id: e.refund_id,
    payment_intent: e.payment_intent,
    merchant_id: e.merchant_id,
    mode: e.mode,
    amount: e.amount,
    reason: e.reason,
    chain_id: e.chain_id,
    from: e.from,
    to: e.to,
    reference: e.reference,
    nonce_hint: e.nonce_hint,
    signing_payload: e.signing_payload,
    metadata: e.metadata,
    required_confirmations: e.required_confirmations,
    created_at: e.at,
    tx_hash: null,
    block_height: null,
    confirmations: 0,
    completed_at: null,
    failure: null,
  };
}
