import type { ChainMark, DepthNote } from '../chain/signal-order.ts';
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
  /** Machine version 2 (ADR 0016): the indexer's position of the known inclusion, the highest position heard about the transfer, and a depth report kept for an inclusion not heard of yet. */
  inclusion_pos?: number | null;
  chain_mark?: ChainMark | null;
  chain_depth?: DepthNote | null;
  /**
   * Machine version 3 (ADR 0033): the hash of the block the transfer is known in (a newer
   * inclusion in another block means this one left the chain), and how many outcomes
   * (`refund.confirmed`, `refund.reverted`, `refund.released`) were sent to the intent: each
   * carries its number, so the intent keeps the newest whatever the order they arrive in.
   */
  block_hash?: string | null;
  outcomes_sent?: number;
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
    inclusion_pos: null,
    chain_mark: null,
    chain_depth: null,
    block_hash: null,
    outcomes_sent: 0,
  };
}
