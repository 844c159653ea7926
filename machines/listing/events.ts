import { z } from 'zod';

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

export const listingRegister = z.object({ type: z.literal('listing.register'), ...base, ...listingFields });
export const listingUpdate = z.object({ type: z.literal('listing.update'), ...base, ...listingFields });
/** A purchase of this listing settled (analytics.transactions). */
export const listingSettled = z.object({ type: z.literal('listing.purchase_settled'), ...base, intent_id: z.string().min(1) });

export const listingEvents = z.discriminatedUnion('type', [listingRegister, listingUpdate, listingSettled]);

export type ListingEvent = z.infer<typeof listingEvents>;
export type ListingRegisterEvent = z.infer<typeof listingRegister>;
export type ListingAssetEntry = z.infer<typeof listingAsset>;
