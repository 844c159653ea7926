import type { LinkHoldContext } from './context.ts';
import type { LinkHoldEvent } from './events.ts';

/** The hold timer fired at or after the hold's end (a firing is never early, but a clock may be). */
export function holdDue(c: LinkHoldContext, e: LinkHoldEvent): boolean {
  return e.type === 'timer.expired' && e.timer === 'hold' && e.at >= c.expires_at;
}

/** A released hold whose late payment has not asked the link yet: it asks once. */
export function mayReclaim(c: LinkHoldContext): boolean {
  return !c.reclaiming;
}

/** Only an asked-for answer moves a released hold. */
export function awaitingVerdict(c: LinkHoldContext): boolean {
  return c.reclaiming;
}
