/**
 * Legs on the wire: an x402 v2 PaymentPayload (`{x402Version, accepted, payload}`), sent as
 * an object or as the base64 header value the SDK makes; and the seller leg handed back as
 * ready header values for a v2 (`PAYMENT-SIGNATURE`) or v1 (`X-PAYMENT`) seller.
 */
import { USDC_TOKEN, type MarketAsset } from '../../machines/money/market.ts';
import { strictBase64 } from '../strict-base64.ts';
import { parseStrictJsonBytes } from '../strict-json.ts';
import type { UsdcToken } from './lanes/usdc-ledger.ts';
import type { SellerOffer } from '../../machines/money/seller-offer.ts';
import { fromV1Network, sellerRequirement, v1NetworkName } from './requirements.ts';

export interface DecodedLeg {
  x402Version: number;
  accepted: Record<string, unknown> | undefined;
  payload: unknown;
}

/** The base64 (or base64url) text of a strict JSON document (runtime/strict-json.ts), or undefined. */
export function fromBase64Json(s: string): unknown {
  const raw = strictBase64(s);
  if (!raw) return undefined;
  const parsed = parseStrictJsonBytes(raw);
  return parsed.ok ? parsed.value : undefined;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * A v2 payload, or a v1 one (`{x402Version: 1, scheme, network: "base", payload}`) read as v2;
 * v1 names no asset, so it is the lane's token.
 */
export function decodeLeg(raw: unknown, token: UsdcToken = USDC_TOKEN): DecodedLeg | null {
  const v = typeof raw === 'string' ? fromBase64Json(raw) : raw;
  if (!isObject(v)) return null;
  if (v.x402Version === 2 && isObject(v.accepted)) return { x402Version: 2, accepted: v.accepted, payload: v.payload };
  if (v.x402Version === 1 && typeof v.scheme === 'string') {
    const network = fromV1Network(v.network);
    return { x402Version: 1, accepted: { scheme: v.scheme, network, asset: token.address }, payload: v.payload };
  }
  return null;
}

const b64 = (json: string): string => Buffer.from(json, 'utf8').toString('base64');

/** One ready payment header: its name and base64 value. */
export interface ReadyHeader {
  header: 'PAYMENT-SIGNATURE' | 'X-PAYMENT';
  value: string;
}

/**
 * The seller leg as a standalone payment (`exact` on USDC, `exact-anm` with its reference on
 * ANM), for either x402 version of the seller; x402 v1 has no name for `native:1` (nor for
 * EVM chains other than Base and Base Sepolia), so such a leg has no v1 header. Both headers
 * carry the same payload: its JSON is written once and placed in each, which gives the text
 * JSON.stringify gives for the whole document (leg-codec.test.ts holds them equal).
 * `header`/`value` are the one for `sellerVersion` (DESIGN §5 "Purchase": "the header name for
 * the seller's x402 version"), v2 when there is no v1 one; `v1` and `v2` keep both (ADR 0080).
 * The v2 `accepted` is the seller's own offer as quoted (`seller.offer`, ADR 0091), which a
 * stock seller matches field for field.
 */
export function paymentHeaders(asset: MarketAsset, payload: Record<string, unknown>, seller: { payTo: string; amount: string; reference?: string | undefined; offer?: SellerOffer | undefined }, token: UsdcToken = USDC_TOKEN, sellerVersion: 1 | 2 = 2) {
  const accepted = sellerRequirement(asset, seller.payTo, BigInt(seller.amount), seller.offer, token);
  const network = v1NetworkName(token);
  if (seller.reference !== undefined) accepted.extra = { ...accepted.extra, reference: seller.reference };
  const signed = JSON.stringify(payload);
  const v2: ReadyHeader = { header: 'PAYMENT-SIGNATURE', value: b64(`{"x402Version":2,"accepted":${JSON.stringify(accepted)},"payload":${signed}}`) };
  const v1: ReadyHeader | null = asset === 'USDC' && network ? { header: 'X-PAYMENT', value: b64(`{"x402Version":1,"scheme":"exact","network":${JSON.stringify(network)},"payload":${signed}}`) } : null;
  const chosen = sellerVersion === 1 && v1 ? v1 : v2;
  return { header: chosen.header, value: chosen.value, x402_version: chosen === v1 ? 1 : 2, v1, v2 };
}
