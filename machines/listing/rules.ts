import type { ListingContext } from './context.ts';
import type { ListingEvent } from './events.ts';

/** Guards of the listing machine as pure functions. */

/** Only the key that registered the listing may change it (DESIGN §5: same key updates). */
export function sameProvider(ctx: ListingContext, e: ListingEvent): boolean {
  return e.type === 'listing.update' && e.provider_id === ctx.provider_id && e.resource_id === ctx.resource_id;
}

/** A settlement is counted once per intent, however often it is delivered. */
export function newSettlement(ctx: ListingContext, e: ListingEvent): boolean {
  return e.type === 'listing.purchase_settled' && !ctx.counted.includes(e.intent_id);
}
