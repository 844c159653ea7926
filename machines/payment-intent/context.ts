import { split } from '../money/money.ts';
import type { ChainMark, DepthNote } from '../chain/signal-order.ts';
import type { IntentCreateEvent, Quote } from './events.ts';

/**
 * The persisted context of a payment intent. It is stored as JSON, so every amount is an
 * nANM decimal string and every time Unix milliseconds; rules convert to bigint to compute.
 */

/** The one transaction matched to the intent (spec rule 6), as last reported by the chain. */
export interface MatchedTx {
  hash: string;
  /** Sender: where a refund goes. */
  from: string;
  merchant_leg: string;
  fee_leg: string;
  /** Null while only seen in the mempool. */
  block_height: number | null;
  block_hash: string | null;
  receipt: 'success' | 'failed' | null;
  /** The indexer's position of this inclusion (ADR 0016); null while only seen, absent in v1 snapshots. */
  pos?: number | null;
}

export interface RefundRecord {
  refund_id: string;
  amount: string;
  at: number;
}

export interface PaymentIntentContext {
  intent_id: string;
  merchant_id: string;
  mode: 'live' | 'test';
  currency: string;
  requested_amount: string | null;
  anm_amount: string;
  merchant_amount: string;
  protocol_fee: string;
  merchant_order_id: string | null;
  description: string | null;
  metadata: Record<string, unknown>;
  success_url: string | null;
  cancel_url: string | null;
  payment_address: string;
  treasury_address: string;
  payment_reference: string;
  quote: Quote | null;
  required_confirmations: number;
  monitor_window_ms: number;
  created_at: number;
  /** Current payment deadline; moved later when a reorg or drop re-opens the intent. */
  expires_at: number;
  /** When the intent entered EXPIRED (timer or cancel); starts the late-payment window. */
  expired_at: number | null;
  /** When the current settlement reached PAID; cleared by a reorg. */
  completed_at: number | null;
  tx: MatchedTx | null;
  /** head - block_height + 1 of the matched tx, tracked until settlement. */
  confirmations: number;
  /** What the matched tx paid above anm_amount, over both legs ('0' unless overpaid). */
  excess: string;
  refunds: RefundRecord[];
  /** Refunds created and not yet CONFIRMED, FAILED or CANCELED: they hold part of the cap. Absent in v1 snapshots taken before refunds existed. */
  refund_holds?: RefundRecord[];
  /** Highest chain position heard about the transaction (machine version 2; ADR 0016). */
  chain_mark?: ChainMark | null;
  /** The newest depth report for an inclusion not yet heard of (machine version 2). */
  chain_depth?: DepthNote | null;
  /** Per refund, the newest outcome number applied (machine version 3; ADR 0033): older outcomes are dropped. */
  refund_marks?: Record<string, number>;
  /** The actor the intent was made for (an invoice), told of settlements and their reorgs; absent before invoices existed. */
  owner?: { kind: string; id: string } | null;
}

/** The machine input is the validated create event itself. */
export type PaymentIntentInput = IntentCreateEvent;

export function initialContext(e: PaymentIntentInput): PaymentIntentContext {
  const s = split(BigInt(e.anm_amount));
  return {
    intent_id: e.intent_id,
    merchant_id: e.merchant_id,
    mode: e.mode,
    currency: e.currency,
    requested_amount: e.requested_amount,
    anm_amount: s.anm_amount.toString(),
    merchant_amount: s.merchant_amount.toString(),
    protocol_fee: s.protocol_fee.toString(),
    merchant_order_id: e.merchant_order_id,
    description: e.description,
    metadata: e.metadata,
    success_url: e.success_url,
    cancel_url: e.cancel_url,
    payment_address: e.payment_address,
    treasury_address: e.treasury_address,
    payment_reference: e.payment_reference,
    quote: e.quote,
    required_confirmations: e.required_confirmations,
    monitor_window_ms: e.monitor_window_ms,
    created_at: e.at,
    expires_at: e.expires_at,
    expired_at: null,
    completed_at: null,
    tx: null,
    confirmations: 0,
    excess: '0',
    refunds: [],
    refund_holds: [],
    chain_mark: null,
    chain_depth: null,
    // Only intents made for another actor carry it, so every other snapshot keeps its shape.
    ...(e.owner ? { owner: e.owner } : {}),
  };
}
