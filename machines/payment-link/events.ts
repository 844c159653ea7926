import { z } from 'zod';

/**
 * Events of the payment-link actor (DESIGN §7 "Payment links"). The link counts its units from
 * what its holds tell it; each hold sends each of these at most once, under an id derived from
 * the hold, so the engine's dedupe makes every count exactly-once.
 */
const base = { id: z.string().min(1), at: z.number().int().nonnegative() };
const decimal = z.string().regex(/^[0-9]+(\.[0-9]+)?$/);
const holdRef = { hold_id: z.string().regex(/^hold_[a-z2-7]{24}$/) };

export const linkPrice = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('fixed'), amount: decimal, currency: z.string().min(3).max(8) }),
  z.object({ kind: z.literal('range'), min_amount: decimal, max_amount: decimal, currency: z.string().min(3).max(8) }),
]);

export const linkCreate = z.object({
  type: z.literal('link.create'),
  ...base,
  link_id: z.string().min(1),
  merchant_id: z.string().min(1),
  mode: z.enum(['live', 'test']),
  slug: z.string().regex(/^[a-z0-9-]{1,64}$/),
  code: z.string().regex(/^[a-z2-7]{8}$/),
  title: z.string().min(1),
  description: z.string().nullable().default(null),
  price: linkPrice,
  units_total: z.number().int().positive().nullable().default(null),
  success_url: z.string().nullable().default(null),
  metadata: z.record(z.string(), z.unknown()).default({}),
});

export const linkDeactivate = z.object({ type: z.literal('link.deactivate'), ...base });
/** A buyer pressed Pay: one unit becomes a hold, if one is left (the guard `unitLeft`). */
export const linkTake = z.object({ type: z.literal('link.hold.take'), ...base, ...holdRef, intent_id: z.string().min(1), expires_at: z.number().int() });
/** The hold ended without a payment: its unit returns. */
export const linkRelease = z.object({ type: z.literal('link.hold.release'), ...base, ...holdRef });
/** The hold's intent was paid while the unit was held: the unit is sold. */
export const linkConsume = z.object({ type: z.literal('link.hold.consume'), ...base, ...holdRef });
/** A released hold's intent was paid late: a unit is sold again if one is left, else it is oversold. */
export const linkReclaim = z.object({ type: z.literal('link.hold.reclaim'), ...base, ...holdRef });

export const paymentLinkEvents = z.discriminatedUnion('type', [linkCreate, linkDeactivate, linkTake, linkRelease, linkConsume, linkReclaim]);

export type PaymentLinkEvent = z.infer<typeof paymentLinkEvents>;
export type PaymentLinkCreateEvent = z.infer<typeof linkCreate>;
export type LinkPrice = z.infer<typeof linkPrice>;
