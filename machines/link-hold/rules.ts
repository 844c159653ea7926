import type { LinkHoldContext } from './context.ts';
import type { LinkHoldEvent } from './events.ts';

/**
 * The hold's own timer. Its row's generation, checked by the engine, already drops a stale
 * firing; the time is the timer row's to decide (an operator may bring it forward).
 */
export function holdDue(e: LinkHoldEvent): boolean {
  return e.type === 'timer.expired' && e.timer === 'hold';
}

/** A released hold whose late payment has not asked the link yet: it asks once. */
export function mayReclaim(c: LinkHoldContext): boolean {
  return !c.reclaiming;
}

/** Only an asked-for answer moves a released hold. */
export function awaitingVerdict(c: LinkHoldContext): boolean {
  return c.reclaiming;
}
