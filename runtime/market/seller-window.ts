/**
 * The seller leg's window against the seller's own terms (ADR 0091): a seller whose 402 says
 * `maxTimeoutSeconds` takes a payment valid that long from when it was made (the SDK's own
 * clients sign `validBefore = now + maxTimeoutSeconds`), so a seller leg that outlives it is
 * not the payment the seller asked for. Checked on the quote's pinned offer only: a purchase
 * quoted before any probe keeps the window it always had.
 */
import type { SellerOffer } from '../../machines/money/seller-offer.ts';

/** Clock difference allowed between the buyer that signed the leg and the marketplace. */
export const WINDOW_SKEW_S = 10;

/** Why a seller leg valid until `validBeforeS` (Unix seconds) outlives `offer`'s timeout at `nowS`; null when it does not. */
export function sellerWindowProblem(offer: SellerOffer | undefined, validBeforeS: number, nowS: number): string | null {
  if (!offer) return null;
  const latest = nowS + offer.max_timeout_seconds + WINDOW_SKEW_S;
  if (validBeforeS <= latest) return null;
  return `the seller leg is valid until ${validBeforeS}, longer than the seller's maxTimeoutSeconds (${offer.max_timeout_seconds} s) from now`;
}
