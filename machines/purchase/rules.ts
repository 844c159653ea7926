import type { PurchaseContext } from './context.ts';
import type { PurchaseEvent } from './events.ts';

/** Guards of the purchase machine as pure functions. */

/** gross = seller + fee, checked wherever money moves (marketplace.md "What the service does" 6). */
export function grossHolds(ctx: Pick<PurchaseContext, 'seller' | 'fee' | 'total'>): boolean {
  return BigInt(ctx.total) === BigInt(ctx.seller.amount) + BigInt(ctx.fee.amount);
}

/** Both legs pay exactly the quote's payees and amounts, before the quote expires. */
export function legsMatchQuote(ctx: PurchaseContext, e: PurchaseEvent): boolean {
  if (e.type !== 'purchase.verify' || e.at > ctx.expires_at || !grossHolds(ctx)) return false;
  const { seller, fee } = e.legs;
  return (
    seller.pay_to === ctx.seller.pay_to &&
    seller.amount === ctx.seller.amount &&
    fee.pay_to === ctx.fee.pay_to &&
    fee.amount === ctx.fee.amount &&
    BigInt(seller.amount) + BigInt(fee.amount) === BigInt(ctx.total) &&
    seller.nonce !== fee.nonce
  );
}

export function sellerSettled(ctx: PurchaseContext): boolean {
  return ctx.legs?.seller.tx != null;
}

export function isLeg(e: PurchaseEvent, leg: 'seller' | 'fee'): boolean {
  return (e.type === 'leg.settled' || e.type === 'leg.failed') && e.leg === leg;
}

export function isTimer(e: PurchaseEvent, name: string): boolean {
  return e.type === 'timer.expired' && e.timer === name;
}
