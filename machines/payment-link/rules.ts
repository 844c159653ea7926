import type { PaymentLinkContext } from './context.ts';

/** Units neither held nor sold; null for an unlimited link. Never negative (the guards keep it so). */
export function unitsLeft(c: Pick<PaymentLinkContext, 'units_total' | 'units_held' | 'units_sold'>): number | null {
  return c.units_total === null ? null : c.units_total - c.units_held - c.units_sold;
}

/** A limited link with a unit neither held nor sold. Unlimited links take no holds. */
export function unitLeft(c: PaymentLinkContext): boolean {
  const left = unitsLeft(c);
  return left !== null && left > 0;
}

/** A hold can only return or sell a unit that is counted as held. */
export function holdOutstanding(c: PaymentLinkContext): boolean {
  return c.units_held > 0;
}
