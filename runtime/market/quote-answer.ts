/**
 * A quote's answer (DESIGN §5 "Quote"): all of it but the intent id and the expiry depends on
 * the listing's version and the asset alone, so those terms and the answer's JSON text around
 * the two are made once per listing version and asset (`QuoteTerms.of`) and each quote only
 * fills them in. `quoteAnswer` is the answer as an object; `quoteAnswerJson` its JSON text,
 * the same as `JSON.stringify(quoteAnswer(...))` (a property test holds them equal).
 */
import { MARKET_FEE_BPS, MARKET_LANES, assertGross, priceSplit, type MarketAsset } from '../../machines/money/market.ts';
import { priceSplitView } from '../../machines/purchase/view.ts';
import type { ListingRecord } from '../../machines/listing/view.ts';
import { legReference } from './lanes/anm-leg.ts';
import type { UsdcToken } from './lanes/usdc-ledger.ts';
import type { SellerOffer } from '../../machines/money/seller-offer.ts';
import { assetId, DEFAULT_TIMEOUT_S, laneExtra, laneNetwork, type PaymentRequirements } from './requirements.ts';

/** What a quote of one listing version in one asset says, whatever its intent id. */
export interface QuoteTerms {
  record: Pick<ListingRecord, 'resource_id' | 'name' | 'endpoint' | 'method' | 'description'>;
  asset: MarketAsset;
  network: `${string}:${string}`;
  scheme: string;
  assetId: string;
  extra: Record<string, unknown>;
  seller: { pay_to: string; amount: string };
  fee: { pay_to: string; amount: string };
  total: string;
  fee_bps: number;
  /** The seller's own offer as last probed (ADR 0091): the seller leg's terms; undefined before any probe. */
  seller_offer: SellerOffer | undefined;
  /** The legs' window: the seller's maxTimeoutSeconds when known, else the lane's default. */
  timeout_s: number;
}

/** The terms of `record` in `asset`, whose accepted entry is `accepted`. */
export function quoteTerms(record: QuoteTerms['record'], accepted: { pay_to: string; seller_price_atomic: string; seller_offer?: SellerOffer | null }, asset: MarketAsset, token: UsdcToken, feeAddress: string): QuoteTerms {
  const split = priceSplit(asset, BigInt(accepted.seller_price_atomic));
  assertGross(split.total, split.seller, split.fee);
  return {
    record,
    asset,
    network: laneNetwork(asset, token),
    scheme: MARKET_LANES[asset].scheme,
    assetId: assetId(asset, token),
    extra: laneExtra(asset, token),
    seller: { pay_to: accepted.pay_to, amount: split.seller.toString() },
    fee: { pay_to: feeAddress, amount: split.fee.toString() },
    total: split.total.toString(),
    fee_bps: MARKET_FEE_BPS,
    seller_offer: accepted.seller_offer ?? undefined,
    timeout_s: accepted.seller_offer?.max_timeout_seconds ?? DEFAULT_TIMEOUT_S,
  };
}

/** The quote's answer: the purchase intent, its price split and the x402 requirements naming both legs. */
export function quoteAnswer(t: QuoteTerms, intentId: string, expiresAtMs: number) {
  const ref = (leg: 'seller' | 'fee') => (t.asset === 'ANM' ? { reference: legReference(intentId, leg) } : {});
  return {
    intent_id: intentId,
    status: 'QUOTED' as const,
    resource: { resource_id: t.record.resource_id, name: t.record.name, endpoint: t.record.endpoint, method: t.record.method },
    price: priceSplitView(t),
    expires_at: Math.floor(expiresAtMs / 1000),
    payment_requirements: {
      x402Version: 2,
      resource: { url: t.record.endpoint, description: t.record.description },
      accepts: [
        {
          scheme: t.scheme,
          network: t.network,
          asset: t.assetId,
          amount: t.total,
          payTo: t.seller.pay_to,
          // The buyer's client signs both legs for this long: no longer than the seller takes a payment for.
          maxTimeoutSeconds: t.timeout_s,
          extra: { ...t.extra, intent_id: intentId, legs: { seller: { payTo: t.seller.pay_to, amount: t.seller.amount, ...ref('seller') }, fee: { payTo: t.fee.pay_to, amount: t.fee.amount, ...ref('fee') } } },
        } satisfies PaymentRequirements,
      ],
    },
  };
}

export type QuoteAnswer = ReturnType<typeof quoteAnswer>;

// Stand-ins rendered into the kept text where the intent id and the expiry go. No listing string
// holds a NUL (registration refuses one: PostgreSQL cannot store it), so their escaped text can
// come from nowhere else.
const ID_MARK = '\u0000id\u0000';
const EXPIRY_MARK = '\u0000exp\u0000';
const MARKS = /(\\u0000id\\u0000|"\\u0000exp\\u0000")/;

/** The answer's JSON text around its stand-ins; `isId[i]`: the intent id goes after `pieces[i]`, else the expiry. */
interface Template {
  pieces: string[];
  isId: boolean[];
}

const templates = new WeakMap<QuoteTerms, Template>();

function template(t: QuoteTerms): Template {
  let kept = templates.get(t);
  if (kept) return kept;
  const answer: Record<string, unknown> = quoteAnswer(t, ID_MARK, 0);
  answer.expires_at = EXPIRY_MARK;
  const parts = JSON.stringify(answer).split(MARKS);
  kept = { pieces: parts.filter((_, i) => i % 2 === 0), isId: parts.filter((_, i) => i % 2 === 1).map((m) => !m.startsWith('"')) };
  templates.set(t, kept);
  return kept;
}

/** `JSON.stringify(quoteAnswer(t, intentId, expiresAtMs))`, from the text kept for `t` (`intentId`: needs no escaping, as `pi_<hex>`). */
export function quoteAnswerJson(t: QuoteTerms, intentId: string, expiresAtMs: number): string {
  const { pieces, isId } = template(t);
  const expiry = String(Math.floor(expiresAtMs / 1000));
  let out = pieces[0]!;
  for (let i = 1; i < pieces.length; i++) out += (isId[i - 1] ? intentId : expiry) + pieces[i]!;
  return out;
}
