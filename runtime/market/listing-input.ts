import { z } from 'zod';
import { isMarketAsset, parseAtomicDecimal, priceSplit, type MarketAsset } from '../../machines/money/market.ts';
import { MarketRefusal } from './errors.ts';

/**
 * The body of `POST /api/v1/resources` (DESIGN §5 "Listings"): the seller-set fields of the
 * listing record, `pay_to` per accepted asset and `signatures` over the RFC 8785 JSON of the
 * body without `signatures`. A field outside the schema, at any depth, is `invalid_body`
 * (docs/errors.md): a seller's misspelt field would otherwise be signed and silently dropped.
 */
const asset = z.enum(['USDC', 'ANM']);
const price = z.string().max(100);
const object = z.record(z.string(), z.unknown()).nullable().default(null);
const httpUrl = z
  .string()
  .max(2048)
  .refine((s) => URL.canParse(s) && /^https?:$/.test(new URL(s).protocol), 'an absolute http(s) URL');
/** The seller's endpoint: called by routed execution and the scanner, which never send credentials in a URL. */
const endpointUrl = httpUrl.refine((s) => {
  const u = URL.canParse(s) ? new URL(s) : null;
  return u !== null && u.username === '' && u.password === '';
}, 'an http(s) URL without a user name or password');

export const listingBody = z.strictObject({
  // Spaces alone name nothing: search could not match it and a fragment's tool name would be a bare `call`.
  name: z.string().min(1).max(200).regex(/\S/, 'must not be blank'),
  description: z.string().max(4000).default(''),
  category: z.string().max(100).default(''),
  tags: z.array(z.string().min(1).max(50)).max(20).default([]),
  endpoint: endpointUrl,
  method: z.enum(['GET', 'POST', 'PUT', 'PATCH', 'DELETE']).default('GET'),
  pricing: z.strictObject({ model: z.literal('per_call').default('per_call'), asset, seller_price: price }),
  /** Further assets the seller accepts, each with its own seller price. */
  accepted_assets: z.array(z.strictObject({ asset, seller_price: price })).max(1).default([]),
  pay_to: z.strictObject({ USDC: z.string().regex(/^0x[0-9a-fA-F]{40}$/).optional(), ANM: z.string().max(200).optional() }),
  documentation_url: httpUrl.nullable().default(null),
  request_schema: object,
  response_schema: object,
  example_request: object,
  example_response: object,
  signatures: z.strictObject({
    USDC: z.string().regex(/^0x[0-9a-fA-F]{130}$/).optional(),
    ANM: z.strictObject({ public_key: z.string().max(4000), signature: z.string().max(6000) }).optional(),
  }),
});

export type ListingBody = z.infer<typeof listingBody>;

export interface PricedAsset {
  asset: MarketAsset;
  seller: bigint;
}

/** The priced assets, primary first; each price a valid amount whose total fits its asset. */
export function pricedAssets(body: ListingBody): PricedAsset[] {
  const all = [body.pricing, ...body.accepted_assets];
  if (new Set(all.map((a) => a.asset)).size !== all.length) throw new MarketRefusal('invalid_body', 'each asset may be priced once');
  return all.map((a) => {
    const seller = isMarketAsset(a.asset) ? parseAtomicDecimal(a.asset, a.seller_price) : null;
    if (seller === null) throw new MarketRefusal('invalid_body', `seller_price ${JSON.stringify(a.seller_price)} is not a positive ${a.asset} amount`);
    try {
      priceSplit(a.asset, seller);
    } catch {
      throw new MarketRefusal('invalid_body', `seller_price of ${a.asset} is beyond what the asset can carry`);
    }
    return { asset: a.asset, seller };
  });
}
