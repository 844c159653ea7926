/**
 * The edges of a routed execution's HTTP exchange (DESIGN §5 "Routed execution"): which header
 * the buyer's seller payment goes in, and the seller's answer as the execute response carries it.
 */
import type { PurchaseStatus } from '../../machines/purchase/view.ts';
import { MarketRefusal } from './errors.ts';
import type { ForwardResult } from './forward.ts';
import { fromBase64Json } from './leg-codec.ts';

export interface ExecuteResult {
  object: 'execution';
  intent_id: string;
  purchase_status: PurchaseStatus;
  status: number;
  headers: Record<string, string>;
  body: string;
  body_encoding: 'utf8' | 'base64';
}

/**
 * The header the seller's 402 named, read from the payment the buyer built for it: x402 v1
 * payments go in `X-PAYMENT`, v2 in `PAYMENT-SIGNATURE`. The value itself is never changed.
 */
export function sellerHeader(value: string): { name: string; nonce: string | null; parsed: Record<string, unknown> } {
  const v = fromBase64Json(value) as { x402Version?: unknown; payload?: { authorization?: { nonce?: unknown } } } | undefined;
  if (!v || typeof v !== 'object' || (v.x402Version !== 1 && v.x402Version !== 2)) {
    throw new MarketRefusal('invalid_payment', 'seller_payment must be the base64 x402 payment header the seller asked for (x402 v1 or v2).', 'invalid_payload');
  }
  const nonce = v.payload?.authorization?.nonce;
  // `parsed`: the header's document, which the seller leg's check reads rather than decoding the header again.
  return { name: v.x402Version === 1 ? 'X-PAYMENT' : 'PAYMENT-SIGNATURE', nonce: typeof nonce === 'string' ? nonce.toLowerCase() : null, parsed: v };
}

// `ignoreBOM`: a leading byte order mark is part of the seller's bytes, passed through like the rest.
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** The seller's answer passed back: its body as UTF-8 text when it is, else base64. */
export function executionResult(intentId: string, purchaseStatus: PurchaseStatus, res: Extract<ForwardResult, { ok: true }>): ExecuteResult {
  const headers = Object.fromEntries(Object.entries(res.headers).filter((e): e is [string, string] => e[1] !== undefined));
  let text: string | null;
  try {
    text = utf8.decode(res.body);
  } catch {
    text = null;
  }
  return {
    object: 'execution',
    intent_id: intentId,
    purchase_status: purchaseStatus,
    status: res.status,
    headers,
    body: text ?? res.body.toString('base64'),
    body_encoding: text === null ? 'base64' : 'utf8',
  };
}
