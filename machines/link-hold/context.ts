import type { LinkHoldCreateEvent } from './events.ts';

export interface LinkHoldContext {
  hold_id: string;
  link_id: string;
  merchant_id: string;
  mode: 'live' | 'test';
  intent_id: string;
  created_at: number;
  expires_at: number;
  /** Why the unit went back: `expired` (the hold timer) or the intent's ending. */
  released_reason: string | null;
  /** A late payment asked the link for a unit and awaits its answer. */
  reclaiming: boolean;
  ended_at: number | null;
}

export function initialHoldContext(e: LinkHoldCreateEvent): LinkHoldContext {
  return {
    hold_id: e.hold_id,
    link_id: e.link_id,
    merchant_id: e.merchant_id,
    mode: e.mode,
    intent_id: e.intent_id,
    created_at: e.at,
    expires_at: e.expires_at,
    released_reason: null,
    reclaiming: false,
    ended_at: null,
  };
}
