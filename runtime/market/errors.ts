/**
 * Refusals of the marketplace runtime. Each carries the code of the one error table
 * (gateway/errors.ts) that the edge answers with; the gateway maps the class once.
 */
export type MarketRefusalCode =
  | 'invalid_listing_signature'
  | 'invalid_body'
  | 'forbidden'
  | 'not_found'
  | 'no_matching_resource'
  | 'quote_expired'
  | 'invalid_payment'
  | 'fee_leg_missing'
  | 'leg_replayed'
  | 'ledger_unavailable'
  | 'seller_unreachable'
  | 'rate_limited';

export class MarketRefusal extends Error {
  constructor(
    readonly code: MarketRefusalCode,
    message: string,
    /** x402 verify reason (`invalidReason`) when the refusal is a payment's. */
    readonly reason?: string,
    /** Seconds until a `rate_limited` refusal would be lifted (the Retry-After header). */
    readonly retryAfter?: number,
  ) {
    super(message);
    this.name = 'MarketRefusal';
  }
}
