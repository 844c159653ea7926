import { z } from 'zod';

/**
 * The seller's own x402 offer on one lane, as its 402 spells it (ADR 0091): what a stock x402
 * seller compares a payment's `accepted` against (`@x402/core`'s
 * `paymentRequirementsMatchAccepted`: scheme, network, asset, amount, payTo and
 * maxTimeoutSeconds exactly, `extra` as a subset) beyond what the listing already fixes.
 * The scanner matches payTo and asset without case and ignores the timeout and `extra`, so
 * these can differ from the listing's while the probe still matches. A timeout that is not a
 * whole number of seconds is not kept (the legs are then made on the defaults, as before).
 */
export const MAX_OFFER_EXTRA_CHARS = 2048;

export const sellerOffer = z.object({
  /** `payTo` as the seller spells it. */
  pay_to: z.string().min(1).max(200),
  /** `asset` (the token) as the seller spells it. */
  asset_id: z.string().min(1).max(200),
  max_timeout_seconds: z.number().int().positive().max(31_536_000),
  /** The seller's `extra`, absent when its 402 had none; a few KiB at most. */
  extra: z.record(z.string(), z.unknown()).refine((x) => JSON.stringify(x).length <= MAX_OFFER_EXTRA_CHARS, 'extra is too long').optional(),
});

export type SellerOffer = z.infer<typeof sellerOffer>;

/** A seller offer read on one of the listing's lanes. */
export const laneOffer = sellerOffer.extend({ asset: z.enum(['USDC', 'ANM']) });
export type LaneOffer = z.infer<typeof laneOffer>;
