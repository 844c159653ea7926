import type { LinkHoldContext } from './context.ts';

export type LinkHoldStatus = 'HELD' | 'CONSUMED' | 'RELEASED' | 'OVERSOLD';

/** A hold as the dashboard lists it. */
export function holdResource(c: LinkHoldContext, status: string) {
  return {
    id: c.hold_id,
    object: 'payment_link_hold' as const,
    payment_link: c.link_id,
    payment_intent: c.intent_id,
    status,
    released_reason: c.released_reason,
    oversold: status === 'OVERSOLD',
    created_at: new Date(c.created_at).toISOString(),
    expires_at: new Date(c.expires_at).toISOString(),
    ended_at: c.ended_at === null ? null : new Date(c.ended_at).toISOString(),
  };
}
