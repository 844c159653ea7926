import type { EventBase } from '../../machines/kit/durable.ts';
import type { PersistedSnapshot } from '../../machines/kit/step.ts';

/** The types the engine shares with its callers: targets, results, envelopes, feed items. */
export interface ActorTarget {
  kind: string;
  id: string;
  /** Owner columns, taken when the create event brings the actor into being. */
  merchant?: string | null;
  mode?: 'live' | 'test' | null;
}

export type Outcome = 'applied' | 'ignored' | 'duplicate' | 'stale_timer';

/** An actor's row as a commit left it: what results and feed items both carry. */
export interface ActorState {
  kind: string;
  merchant: string | null;
  mode: string | null;
  version: number;
  status: string;
  snapshot: PersistedSnapshot;
}

export interface ApplyResult extends ActorState {
  outcome: Outcome;
  actorId: string;
}

/** What travels on `actor.<kind>.<partition>` subjects. */
export interface ActorEnvelope {
  target: ActorTarget;
  event: EventBase & Record<string, unknown>;
}

/** Published after commit on `snap.<kind>.<id>`: the live feed for SSE and the visualizer. */
export interface SnapshotFeedItem extends ActorState {
  id: string;
  /** The type of the event that made this version. */
  event: string;
}

export interface ActorHostHooks {
  /** Runs after commit and before the bus ack; fault tests kill the process here. */
  afterCommit?(result: ApplyResult, event: EventBase): void | Promise<void>;
}
