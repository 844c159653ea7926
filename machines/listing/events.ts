import { z } from 'zod';
import { laneOffer } from '../money/seller-offer.ts';

/**
 * Events of the listing actor (DESIGN §5 "Listings"). The runtime checks the seller's
 * signature before it sends `listing.register`; the machine records what was registered.
 */
const atomic = z.string().regex(/^[1-9][0-9]*$/);
const base = { id: z.string().min(1), at: z.number().int().nonnegative() };
const jsonObject = z.record(z.string(), z.unknown()).nullable();

/** One accepted asset as the seller priced it: the split is derived, never stored. */
export const listingAsset = z.object({
  asset: z.enum(['USDC', 'ANM']),
  pay_to: z.string().min(1),
  seller_price_atomic: atomic,
});

/** Every field the seller sets; the same on the first registration and on an update. */
export const listingFields = {
  resource_id: z.string().regex(/^res_[0-9a-f]+$/),
  provider_id: z.string().regex(/^prov_[0-9a-f]+$/),
  name: z.string().min(1),
  description: z.string(),
  category: z.string(),
  tags: z.array(z.string()),
  endpoint: z.string().url(),
  method: z.string().min(1),
  model: z.literal('per_call'),
  /** The first is the listing's `pricing`; all of them are its `accepted_assets`. */
  assets: z.array(listingAsset).min(1),
  documentation_url: z.string().nullable(),
  request_schema: jsonObject,
  response_schema: jsonObject,
  example_request: jsonObject,
  example_response: jsonObject,
};

export const listingRegister = z.object({
  type: z.literal('listing.register'),
  ...base,
  ...listingFields,
  /** Wait before the first probe: the runtime's jitter, so listings registered together are not probed together. */
  probe_in_ms: z.number().int().nonnegative().optional(),
});
export const listingUpdate = z.object({ type: z.literal('listing.update'), ...base, ...listingFields });
/** A purchase of this listing settled (analytics.transactions). */
export const listingSettled = z.object({ type: z.literal('listing.purchase_settled'), ...base, intent_id: z.string().min(1) });

/** How a probe ended (DESIGN §5 "Scanner"); only `ok` is a well-formed 402 matching the listing. */
export const probeOutcome = z.enum(['ok', 'mismatch', 'pay_to_mismatch', 'malformed', 'no_payment_required', 'http_error', 'server_error', 'timeout', 'unreachable', 'refused']);
export type ProbeOutcome = z.infer<typeof probeOutcome>;
/** The x402 version of a well-formed 402 a probe read (v2: `PAYMENT-REQUIRED` header, v1: JSON body); absent when none was read. */
export const probedVersion = z.union([z.literal(1), z.literal(2)]).optional();

/** The probe timer fired: a round is due (the timer row's claim makes it one per round). */
export const listingProbeDue = z.object({ type: z.literal('listing.probe_due'), ...base, timer: z.string(), generation: z.number().int() });
/** A probe's result, made outside any transaction and sent as a fact. */
export const listingProbed = z.object({
  type: z.literal('listing.probed'),
  ...base,
  outcome: probeOutcome,
  http_status: z.number().int().min(100).max(599).nullable(),
  latency_ms: z.number().int().nonnegative().nullable(),
  detail: z.string().max(300),
  x402_version: probedVersion,
  /**
   * Per lane the listing sells, the seller's offer that matched it, as its 402 spells it
   * (ADR 0091): what the seller leg must repeat for a stock seller to take it. Absent when no
   * lane matched, and in probes from before it.
   */
  seller_offers: z.array(laneOffer).max(2).optional(),
  /** The scanner's interval plus its jitter: when the next round is due after this one. */
  next_probe_in_ms: z.number().int().positive(),
  /**
   * The owner whose terms the probe was judged against (absent in probes from before ADR 0072):
   * a probe in flight while the listing changed hands says nothing about the new owner's terms.
   */
  provider_id: z.string().regex(/^prov_[0-9a-f]+$/).optional(),
  /**
   * The listing's `owner_generation` when the probe's target was read (ADR 0077): unlike the
   * owner's id it tells A -> B -> A apart. Absent in probes from before it: judged by `provider_id`.
   */
  owner_generation: z.number().int().nonnegative().optional(),
  /**
   * The digest of the terms the probe checked (context.ts `termsDigest`, ADR 0088): a probe in
   * flight while the owner updated them says nothing of the new ones. Absent in probes from
   * before it: read as the current terms.
   */
  terms_digest: z.string().regex(/^[0-9a-f]{32}$/).optional(),
});
/**
 * What the marketplace saw when it probed the endpoint for a takeover (ADR 0072): the probe
 * judged against the new registration's terms, and per lane that registration lists every
 * `payTo` the endpoint's 402 offered on it (scheme, network and token as the scanner matches them).
 */
export const takeoverProof = z.object({
  probed_at: z.number().int().nonnegative(),
  outcome: probeOutcome,
  http_status: z.number().int().min(100).max(599).nullable(),
  latency_ms: z.number().int().nonnegative().nullable(),
  detail: z.string().max(300),
  x402_version: probedVersion,
  payees: z.array(z.object({ asset: listingAsset.shape.asset, pay_to: z.array(z.string().min(1)).max(20) })).max(2),
});
/**
 * Another key takes the listing over with proof that it controls the endpoint (ADR 0072).
 * It names the ownership it was proven against, so a proof made before the listing changed
 * hands again is refused: by its generation (ADR 0077), or in events from before it by the
 * owner's start, which two ownerships begun in one millisecond share.
 */
export const listingTakeOver = z.object({
  type: z.literal('listing.take_over'),
  ...base,
  ...listingFields,
  previous_provider_id: listingFields.provider_id,
  previous_owner_since: z.number().int().nonnegative(),
  previous_owner_generation: z.number().int().nonnegative().optional(),
  proof: takeoverProof,
});
/**
 * A listing with no probe timer (registered before the scanner, or its row lost) gets its
 * rounds back: the runtime that scans sends this on start, with the jitter of the first one.
 */
export const listingResumeProbes = z.object({ type: z.literal('listing.resume_probes'), ...base, probe_in_ms: z.number().int().nonnegative() });
/**
 * A routed execution of this listing ended in a way paid-call success counts (score.ts
 * `paidCallCounts`): `ok` when the seller answered below 400. Events journaled before ADR 0088
 * also hold 4xx answers as not `ok`; they age out of the window like any other.
 */
export const listingExecuted = z.object({ type: z.literal('listing.executed'), ...base, intent_id: z.string().min(1), ok: z.boolean() });

export const listingEvents = z.discriminatedUnion('type', [listingRegister, listingUpdate, listingSettled, listingProbeDue, listingProbed, listingExecuted, listingResumeProbes, listingTakeOver]);

export type ListingEvent = z.infer<typeof listingEvents>;
export type ListingRegisterEvent = z.infer<typeof listingRegister>;
export type ListingAssetEntry = z.infer<typeof listingAsset>;
export type ListingTakeOverEvent = z.infer<typeof listingTakeOver>;
export type TakeoverProof = z.infer<typeof takeoverProof>;
