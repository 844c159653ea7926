import type { SellerOffer } from '../money/seller-offer.ts';
import type { ChainLegs } from './chain-legs.ts';
import type { PurchaseQuoteEvent, VerifiedLeg } from './events.ts';

export interface SettledLeg extends VerifiedLeg {
  tx: string | null;
}

export interface PurchaseContext {
  intent_id: string;
  resource_id: string;
  asset: 'USDC' | 'ANM';
  network: string;
  scheme: string;
  seller: { pay_to: string; amount: string };
  fee: { pay_to: string; amount: string };
  total: string;
  fee_bps: number;
  expires_at: number;
  created_at: number;
  legs: { seller: SettledLeg; fee: SettledLeg } | null;
  settled_at: number | null;
  failure: string | null;
  /** ANM lane: settlement depth from the quote, and where the legs stand on the chain once verified. */
  required_confirmations?: number;
  chain?: ChainLegs | null;
  /** The seller's x402 version as quoted (ADR 0080); absent: 2. */
  seller_x402_version?: 1 | 2;
  /** The seller's own offer as quoted (ADR 0091); absent: not known when quoted. */
  seller_offer?: SellerOffer;
  /** Routed execution: the fee leg and the seller's answer (null until one is recorded). */
  execution?: Execution | null;
}

export interface Execution {
  fee: SettledLeg;
  seller_status: number | null;
  started_at: number;
}

export function initialPurchaseContext(e: PurchaseQuoteEvent): PurchaseContext {
  return {
    intent_id: e.intent_id,
    resource_id: e.resource_id,
    asset: e.asset,
    network: e.network,
    scheme: e.scheme,
    seller: e.seller,
    fee: e.fee,
    total: e.total,
    fee_bps: e.fee_bps,
    expires_at: e.expires_at,
    created_at: e.at,
    legs: null,
    settled_at: null,
    failure: null,
    ...(e.required_confirmations !== undefined && { required_confirmations: e.required_confirmations, chain: null }),
    ...(e.seller_x402_version !== undefined && { seller_x402_version: e.seller_x402_version }),
    ...(e.seller_offer !== undefined && { seller_offer: e.seller_offer }),
  };
}
