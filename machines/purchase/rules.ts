import type { PurchaseChainEvent } from './chain-events.ts';
import { applyChain, legFailedOnChain, legSettled, type ChainLegs } from './chain-legs.ts';
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

/** EVM addresses are compared as their 20 bytes; their checksummed and lowercase spellings are one address. */
const sameAddress = (a: string, b: string): boolean => a.toLowerCase() === b.toLowerCase();

/**
 * A settlement is the leg's own transfer: the nonce's transfer moved exactly the leg's amount
 * from its payer to its payee (the quote's, checked at verification). Any other transfer with
 * the nonce used it without paying the leg.
 */
export function transferIsLeg(ctx: PurchaseContext, e: PurchaseEvent): boolean {
  if (e.type !== 'leg.settled') return false;
  const leg = e.leg === 'fee' && ctx.execution ? ctx.execution.fee : ctx.legs?.[e.leg];
  const t = e.transfer;
  return leg !== undefined && sameAddress(t.from, leg.payer) && sameAddress(t.to, leg.pay_to) && t.value === leg.amount;
}

export function isLeg(e: PurchaseEvent, leg: 'seller' | 'fee'): boolean {
  return (e.type === 'leg.settled' || e.type === 'leg.failed') && e.leg === leg;
}

export function isTimer(e: PurchaseEvent, name: string): boolean {
  return e.type === 'timer.expired' && e.timer === name;
}

/** The ANM lane's legs after a chain signal, or null when it is not one or the purchase watches no chain. */
export function chainAfter(ctx: PurchaseContext, e: PurchaseEvent): ChainLegs | null {
  if (!ctx.chain || !e.type.startsWith('chain.')) return null;
  return applyChain(ctx.chain, e as PurchaseChainEvent);
}

/** Both legs settled on the chain: the fee leg can only be there after the seller's (consecutive nonces). */
export function chainSettles(ctx: PurchaseContext, e: PurchaseEvent): boolean {
  const c = chainAfter(ctx, e);
  return c !== null && legSettled(c, 'seller') && legSettled(c, 'fee');
}

/** The seller was paid and the fee transfer failed on the chain. */
export function chainFeeFails(ctx: PurchaseContext, e: PurchaseEvent): boolean {
  const c = chainAfter(ctx, e);
  return c !== null && legSettled(c, 'seller') && legFailedOnChain(c, 'fee');
}

/** The signal settles the seller leg, or takes a settled one back off the chain (a reorg). */
export function chainSellerChanges(ctx: PurchaseContext, e: PurchaseEvent): boolean {
  const c = chainAfter(ctx, e);
  return c !== null && legSettled(c, 'seller') !== sellerSettled(ctx);
}

export function chainSellerSettles(ctx: PurchaseContext, e: PurchaseEvent): boolean {
  return chainSellerChanges(ctx, e) && !sellerSettled(ctx);
}

/** Anything the signal changes in what the purchase knows of its legs (else it is not news). */
export function chainMoves(ctx: PurchaseContext, e: PurchaseEvent): boolean {
  const c = chainAfter(ctx, e);
  return c !== null && JSON.stringify(c) !== JSON.stringify(ctx.chain);
}

/** Routed execution: the fee leg pays exactly the quote's fee, before the quote expires. */
export function feeMatchesQuote(ctx: PurchaseContext, e: PurchaseEvent): boolean {
  if (e.type !== 'purchase.execute' || e.at > ctx.expires_at || !grossHolds(ctx)) return false;
  return e.fee.pay_to === ctx.fee.pay_to && e.fee.amount === ctx.fee.amount && e.deadline_at > e.at;
}

/** The seller's answer has been recorded (either way). */
export function sellerAnswered(ctx: PurchaseContext): boolean {
  return ctx.execution?.seller_status != null;
}

/** The seller answered below 400: the call counts as served and the fee may be taken. */
export function sellerServed(ctx: PurchaseContext): boolean {
  const s = ctx.execution?.seller_status;
  return s != null && s < 400;
}

export function answerServes(e: PurchaseEvent): boolean {
  return e.type === 'execute.answered' && e.seller_status < 400;
}

/** An answer whose statement also settles the fee (ADR 0052): taken only as a served USDC answer. */
export function answerTakesFee(e: PurchaseEvent): boolean {
  return e.type === 'execute.answered' && e.fee_tx !== undefined;
}

/** ANM routed execution: where the chain state says the seller transfer stands. */
export function executionSellerSettled(ctx: PurchaseContext): boolean {
  return ctx.chain != null && legSettled(ctx.chain, 'seller');
}

/** Both transfers of an ANM routed execution already settled (the buyer broadcast them itself). */
export function chainBothSettled(ctx: PurchaseContext): boolean {
  return ctx.chain != null && legSettled(ctx.chain, 'seller') && legSettled(ctx.chain, 'fee');
}

/**
 * The status an `execute.answered` without a fee transaction leads to from EXECUTING, as the
 * machine's branches decide it: the execute response's `purchase_status`, given before the
 * answer is recorded (ADR 0059). An answer recorded already is taken by no branch.
 */
export function statusAfterAnswer(ctx: PurchaseContext, sellerStatus: number): 'EXECUTING' | 'SETTLED' | 'SELLER_FAILED' {
  if (sellerAnswered(ctx)) return 'EXECUTING';
  if (sellerStatus >= 400) return 'SELLER_FAILED';
  return chainBothSettled(ctx) ? 'SETTLED' : 'EXECUTING';
}
