import type { EventBase } from '../../machines/kit/durable.ts';
import type { PersistedSnapshot } from '../../machines/kit/step.ts';
import type { SqlParam } from '../../storage/db.ts';

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
  /** True when the caller's `CreateCompanion` was written in the create's own statement. */
  companionWritten?: boolean;
  /** The snapshot's JSON as this call stored it (absent when it wrote no snapshot). */
  snapshotJson?: string;
}

/**
 * Rows written in the statement that applies an event, only if the event is applied: they
 * commit with it or not at all, in the same round trip. Mostly with a create (ADR 0013): a
 * machine's registration may bring one (the chain reference index of payment intents and
 * refunds), and so may the caller of one create: the gateway records an Idempotency-Key's
 * first response this way (ADR 0005), the response being a pure function of the created
 * snapshot, known before the statement runs. A caller's companion rides on any event taken on
 * the optimistic or the locked path too (a purchase's nonce bindings and response, ADR 0034).
 */
export interface CreateCompanion {
  /** Names the statement variant; the same name must always give the same SQL. */
  name: string;
  /** How many parameters `cte` uses. */
  arity: number;
  /**
   * One or more CTEs (`name AS (...)`) whose parameters start at `$first`; they must write only
   * when `EXISTS (SELECT 1 FROM pe)` (the event was applied).
   */
  cte(first: number): string;
  params(created: ApplyResult): SqlParam[];
  /**
   * A condition on the companion's CTEs (parameters from `$first`, as `cte`'s) that must hold
   * when the event is applied; when it does not, the whole statement fails and nothing of it
   * is written: `apply` throws `CompanionRefusedError`. For rows that must all be written
   * or the event not applied (unique keys another actor may hold).
   */
  guard?(first: number): string;
  /**
   * Unique constraints whose violation by the companion's plain inserts refuses it as a failed
   * guard does (the statement fails, nothing of it is written, `apply` throws
   * `CompanionRefusedError`): a plain insert costs PostgreSQL less than `ON CONFLICT DO NOTHING`
   * and a count, which insert speculatively.
   */
  unique?: readonly string[];
  /**
   * The same rows for several events of one shape written in one statement (create-batch.ts,
   * update-batch.ts): `cte` writes them from JSON array parameters, `$first` on (`arity` of
   * them, 1 when absent), each row naming its actor in `actor_id`; `rows` is one event's rows,
   * one list per parameter. `applied`, when given, names a CTE whose `actor_id` column lists
   * the actors whose events are applied: rows of other actors must not be written (the
   * optimistic path's batch, where each actor's version is checked on its own). A batch
   * statement fails or commits whole. An event whose companion has no `batch` is written alone.
   * `cte` may be absent when the companion writes nothing (a check).
   */
  batch?: { arity?: number; cte?(first: number, applied?: string): string; rows(result: ApplyResult): ReadonlyArray<ReadonlyArray<Record<string, SqlParam>>>; guard?: BatchGuard };
}

/**
 * A companion's guard decided for each event of an optimistic batch (update-batch.ts, ADR 0094),
 * so that a failing guard keeps out its own event only. Without one, an event whose companion
 * has a guard is written alone. A guard that only its writes can decide (ADR 0108: a nonce hold
 * the upsert refused) gives `sure` alone, and fails its statement whole.
 */
export interface BatchGuard {
  /** One or more CTEs read before any actor is written, on the batch's parameters from `$first` (as `batch.cte`'s). */
  cte?(first: number): string;
  /** The condition that the event of the actor `alias.id` passes its guard; one that does not is not written, and is then written alone, where its own statement decides. */
  holds?(alias: string): string;
  /**
   * A condition the written rows must meet (what the checks before the writes could not decide,
   * such as a balance that moved while its row lock was awaited): when it does not hold, the
   * statement fails whole and each of its writes is sent alone.
   */
  sure?(first: number): string;
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
