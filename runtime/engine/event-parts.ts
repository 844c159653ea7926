import type { EventBase } from '../../machines/kit/durable.ts';
import type { ActorTarget, SnapshotFeedItem } from './actor-types.ts';

/** The feed item's JSON around the snapshot's, as the step already encoded it for the store. */
export function feedJson(i: SnapshotFeedItem, snapshotJson: string): string {
  const j = JSON.stringify;
  return `{"id":${j(i.id)},"kind":${j(i.kind)},"merchant":${j(i.merchant)},"mode":${j(i.mode)},"version":${i.version},"status":${j(i.status)},"snapshot":${snapshotJson},"event":${j(i.event)}}`;
}

export function timerEventName(event: EventBase & Record<string, unknown>): string | null {
  return typeof event.timer === 'string' ? event.timer : null;
}

/** An actor created through another actor's `sendTo` names its owner in the create event. */
export function ownerOf(target: ActorTarget, event: EventBase & Record<string, unknown>): { merchant: string | null; mode: 'live' | 'test' | null } {
  return {
    merchant: target.merchant ?? (typeof event.merchant_id === 'string' ? event.merchant_id : null),
    mode: target.mode ?? (event.mode === 'live' || event.mode === 'test' ? event.mode : null),
  };
}
