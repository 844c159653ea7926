import type { EventBase } from '../../machines/kit/durable.ts';
import type { DurableMachine } from '../../machines/kit/durable.ts';
import type { PersistedSnapshot } from '../../machines/kit/step.ts';
import type { ActorTarget, ApplyResult, Outcome, SnapshotFeedItem } from './actor-types.ts';

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

export function resultOf(
  outcome: Outcome,
  def: Pick<DurableMachine, 'kind'>,
  actorId: string,
  version: number,
  status: string,
  snapshot: PersistedSnapshot,
  merchant: string | null,
  mode: string | null,
  snapshotJson?: string,
): ApplyResult {
  const r: ApplyResult = { outcome, actorId, kind: def.kind, merchant, mode, version, status, snapshot };
  if (snapshotJson !== undefined) r.snapshotJson = snapshotJson;
  return r;
}
