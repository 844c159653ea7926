import { z } from 'zod';

/**
 * Events of the hold actor (DESIGN §7): created by its link's take, then told how its payment
 * intent ended (the commerce runtime forwards the intent's facts), or by its own 30-minute timer.
 */
const base = { id: z.string().min(1), at: z.number().int().nonnegative() };

/** The spec's "Payment-link unit hold 30 minutes". */
export const HOLD_TTL_MS = 30 * 60 * 1000;

export const holdCreate = z.object({
  type: z.literal('hold.create'),
  ...base,
  hold_id: z.string().regex(/^hold_[a-z2-7]{24}$/),
  link_id: z.string().min(1),
  merchant_id: z.string().min(1),
  mode: z.enum(['live', 'test']),
  intent_id: z.string().min(1),
  /** When the unit returns if no payment came (the take's time + 30 minutes). */
  expires_at: z.number().int(),
});
/** The intent reached PAID. */
export const holdIntentPaid = z.object({ type: z.literal('intent.paid'), ...base });
/** The intent expired, was canceled, failed or was underpaid. */
export const holdIntentEnded = z.object({ type: z.literal('intent.ended'), ...base, reason: z.string().min(1) });
export const holdTimer = z.object({ type: z.literal('timer.expired'), ...base, timer: z.string().min(1), generation: z.number().int() });
/** The link's answer to a late payment on a released hold. */
export const holdReclaimed = z.object({ type: z.literal('hold.reclaimed'), ...base });
export const holdOversold = z.object({ type: z.literal('hold.oversold'), ...base });

export const linkHoldEvents = z.discriminatedUnion('type', [holdCreate, holdIntentPaid, holdIntentEnded, holdTimer, holdReclaimed, holdOversold]);

export type LinkHoldEvent = z.infer<typeof linkHoldEvents>;
export type LinkHoldCreateEvent = z.infer<typeof holdCreate>;
