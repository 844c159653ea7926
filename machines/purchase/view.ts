import { formatAtomic } from '../money/market.ts';
import type { PurchaseContext } from './context.ts';

export type PurchaseStatus = 'QUOTED' | 'VERIFIED' | 'EXECUTING' | 'SETTLED' | 'SELLER_FAILED' | 'EXPIRED' | 'FEE_FAILED';
export const TERMINAL: readonly string[] = ['SETTLED', 'SELLER_FAILED', 'EXPIRED', 'FEE_FAILED'];

/** The price split of a quote, atomic and decimal (DESIGN §5 "Quote"). */
export function priceSplitView(ctx: Pick<PurchaseContext, 'asset' | 'network' | 'seller' | 'fee' | 'total' | 'fee_bps'>) {
  const f = (s: string) => formatAtomic(ctx.asset, BigInt(s));
  return {
    asset: ctx.asset,
    // The lane's network when quoted (USDC_NETWORK may name another chain than the default).
    network: ctx.network,
    seller_price: f(ctx.seller.amount),
    seller_price_atomic: ctx.seller.amount,
    marketplace_fee: f(ctx.fee.amount),
    marketplace_fee_atomic: ctx.fee.amount,
    total_price: f(ctx.total),
    total_price_atomic: ctx.total,
    fee_bps: ctx.fee_bps,
  };
}

/** `GET /api/v1/purchases/{intent_id}`. */
export function purchaseResource(ctx: PurchaseContext, status: PurchaseStatus) {
  return {
    object: 'purchase' as const,
    intent_id: ctx.intent_id,
    resource_id: ctx.resource_id,
    status,
    price: priceSplitView(ctx),
    seller_pay_to: ctx.seller.pay_to,
    fee_pay_to: ctx.fee.pay_to,
    payer: ctx.legs?.seller.payer ?? ctx.execution?.fee.payer ?? null,
    legs: ctx.legs
      ? {
          seller: { nonce: ctx.legs.seller.nonce, transaction: ctx.legs.seller.tx, valid_before: Math.floor(ctx.legs.seller.valid_before / 1000) },
          fee: { nonce: ctx.legs.fee.nonce, transaction: ctx.legs.fee.tx, valid_before: Math.floor(ctx.legs.fee.valid_before / 1000) },
        }
      : null,
    execution: ctx.execution
      ? {
          seller_status: ctx.execution.seller_status,
          fee: { nonce: ctx.execution.fee.nonce, transaction: ctx.execution.fee.tx, valid_before: Math.floor(ctx.execution.fee.valid_before / 1000) },
        }
      : null,
    expires_at: Math.floor(ctx.expires_at / 1000),
    created_at: Math.floor(ctx.created_at / 1000),
    settled_at: ctx.settled_at === null ? null : Math.floor(ctx.settled_at / 1000),
    failure: ctx.failure,
  };
}
