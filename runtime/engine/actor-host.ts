import type { DurableMachine, EventBase } from '../../machines/kit/durable.ts';
import { create, step, type Accepted } from '../../machines/kit/step.ts';
import type { Db, Queryable } from '../../storage/db.ts';
import type { Bus, Subscription } from '../bus/types.ts';
import { actorSubject } from '../bus/subjects.ts';
import { recordActorEvent } from '../ops/metrics.ts';
import { consumeActorEvents, type ConsumeOptions } from './bus-consumer.ts';
import { MalformedEventError, UnknownActorError, VersionConflictError } from './errors.ts';
import { Mailboxes, settle } from './mailbox.ts';
import type { MachineRegistry } from './registry.ts';
import { SnapshotCache, type CachedActor } from './snapshot-cache.ts';
import { gatherable, stepTogether, type Posted, type StepPorts } from './step-together.ts';
import { MARK_IGNORED, MARK_IGNORED_AT_VERSION, SELECT_CREATED_BY, SELECT_LOCKED, SELECT_TIMER, type LockedRow } from './host-sql.ts';
import { feedJson, ownerOf, resultOf } from './event-parts.ts';
import { planCreate } from './create-statement.ts';
import { createBatcher } from './create-batch.ts';
import { updateBatcher } from './update-batch.ts';
import { planWrite, runWrite, type WriteHow } from './event-write.ts';
import type { TurnBatcher } from './turn-batch.ts';
import type { PlannedCreate } from './create-statement.ts';
import type { PlannedWrite } from './event-write.ts';
import type { ActorEnvelope, ActorHostHooks, ActorTarget, ApplyResult, CreateCompanion, SnapshotFeedItem } from './actor-types.ts';

export interface ActorHostDeps {
  db: Db;
  bus: Bus;
  registry: MachineRegistry;
  hooks?: ActorHostHooks;
  /** Called after every commit that wrote outbox rows, so the relay need not wait for its poll. */
  onOutbox?: () => void;
  /** An event dropped for good (malformed, or still failing after every retry). */
  onPoison?: (envelope: ActorEnvelope, err: Error) => void;
  /** Actors whose last seen row is kept for the optimistic path (0 turns it off). */
  cacheSize?: number;
  /** Creates of one shape written in one statement at most (create-batch.ts; 1: each alone). */
  createBatch?: number;
  /** Optimistic writes of one shape for different actors in one statement at most (update-batch.ts; 1: each alone). */
  updateBatch?: number;
}

/**
 * Hosts durable actors: one Postgres transaction per event (row lock, dedupe, pure
 * transition, snapshot + journal + timers + outbox), effects only after commit.
 */
export class ActorHost {
  private sub: Subscription | undefined;
  private readonly cache: SnapshotCache | null;
  private readonly mailboxes: Mailboxes<Posted, ApplyResult>;
  private readonly creates: TurnBatcher<PlannedCreate, ApplyResult | null>;
  private readonly updates: TurnBatcher<PlannedWrite, boolean>;

  constructor(private readonly deps: ActorHostDeps) {
    this.cache = deps.cacheSize === 0 ? null : new SnapshotCache(deps.cacheSize);
    this.creates = createBatcher(deps.db, deps.createBatch);
    this.updates = updateBatcher(deps.db, deps.updateBatch);
    const ports: StepPorts = {
      db: deps.db,
      registry: deps.registry,
      alone: (target, event) => this.apply(target, event),
      cached: (id) => this.cache?.get(id),
      keep: (id, row) => (row ? this.cache?.set(id, row) : this.cache?.delete(id)),
      afterCommit: (result, event) => this.afterCommit(result, event),
    };
    this.mailboxes = new Mailboxes(
      (queue) => gatherable(deps.registry, queue),
      (letters) => (letters.length === 1 ? settle(letters[0]!, this.apply(letters[0]!.item.target, letters[0]!.item.event)) : stepTogether(ports, letters)),
    );
  }

  /**
   * Validates, then applies one event in one transaction. Safe to call from any process.
   * `companion` is written in the statement that writes the event, only if it is applied
   * (`companionWritten` in the result says whether it was); a create that finds its actor
   * existing writes none.
   */
  async apply(target: ActorTarget, rawEvent: unknown, companion?: CreateCompanion): Promise<ApplyResult> {
    const t0 = performance.now();
    try {
      const r = await this.applyOnce(target, rawEvent, companion);
      recordActorEvent(target.kind, r.outcome, (performance.now() - t0) / 1000);
      return r;
    } catch (err) {
      recordActorEvent(target.kind, 'error', (performance.now() - t0) / 1000);
      throw err;
    }
  }

  private async applyOnce(target: ActorTarget, rawEvent: unknown, companion?: CreateCompanion): Promise<ApplyResult> {
    const def = this.deps.registry.get(target.kind);
    const parsed = def.events.safeParse(rawEvent);
    if (!parsed.success) throw new MalformedEventError(parsed.error.issues);
    const event = parsed.data as EventBase & Record<string, unknown>;
    if (event.type === def.createEvent) {
      const created = await this.creates.write(planCreate(this.deps.registry, def, target, event, companion));
      if (created) {
        this.remember(created);
        await this.afterCommit(created, event);
        return created;
      }
      // The actor exists: the create is a duplicate or not accepted; the locked path decides.
    }
    const creating = event.type === def.createEvent;
    const own = creating ? undefined : companion;
    const seen = creating || typeof event.timer === 'string' ? undefined : this.cache?.get(target.id);
    if (seen) {
      const fast = await this.applyFromCache(def, target, event, seen, own);
      if (fast) {
        await this.afterCommit(fast, event);
        return fast;
      }
      this.cache?.delete(target.id);
    }
    for (let attempt = 0; ; attempt++) {
      try {
        const result = await this.deps.db.tx((q) => this.applyIn(q, def, target, event, own));
        this.remember(result);
        await this.afterCommit(result, event);
        return result;
      } catch (err) {
        // A create racing another create loses the insert; the retry takes the normal path.
        if (err instanceof VersionConflictError && attempt < 3) continue;
        throw err;
      }
    }
  }

  /**
   * The optimistic path: the step runs on the row this process last saw, and one statement
   * (one implicit transaction) writes it if the row still has that version and the event was
   * never applied; the update takes the row lock itself. Null when the row moved on: nothing
   * was written and the locked path decides. Timer firings always take the locked path (their
   * generation is checked under the lock).
   */
  private async applyFromCache(def: DurableMachine, target: ActorTarget, event: EventBase & Record<string, unknown>, seen: CachedActor, companion?: CreateCompanion): Promise<ApplyResult | null> {
    const next = step(def, seen.snapshot, event);
    if (!next.accepted) {
      const r = await this.deps.db.query<{ outcome: string }>(MARK_IGNORED_AT_VERSION, [target.id, event.id, seen.version]);
      const outcome = r.rows[0]?.outcome;
      if (outcome === undefined) return null;
      return resultOf(outcome === 'ignored' ? 'ignored' : 'duplicate', def, target.id, seen.version, seen.state, seen.snapshot, seen.merchant, seen.mode);
    }
    const w = planWrite(this.deps.registry, 'fast', def, target, event, { version: seen.version + 1, stateBefore: seen.state, merchant: seen.merchant, mode: seen.mode }, next, companion);
    // Written alone or with other actors' writes of its shape, each row's version checked on its own.
    if (!(await this.updates.write(w))) return null;
    const result = w.result;
    if (companion) result.companionWritten = true;
    this.remember(result);
    return result;
  }

  /**
   * An actor's row the caller read in a statement of its own (the purchase's, with its
   * idempotency claim): kept as if this process had written it, so the next event for the
   * actor can take the optimistic path. A stale row costs only the fallback to the locked path.
   */
  observe(id: string, row: CachedActor): void {
    this.cache?.set(id, row);
  }

  /**
   * The row this process last wrote or observed for an actor, if it still keeps it. It may be
   * stale (another process moved the actor on): a caller may decide from it only what a write
   * from it re-checks, since that write's version check sends a stale row to the locked path.
   */
  seen(id: string): CachedActor | undefined {
    return this.cache?.get(id);
  }

  private remember(r: ApplyResult): void {
    this.cache?.set(r.actorId, { version: r.version, state: r.status, snapshot: r.snapshot, merchant: r.merchant, mode: r.mode });
  }

  private async applyIn(q: Queryable, def: DurableMachine, target: ActorTarget, event: EventBase & Record<string, unknown>, companion?: CreateCompanion): Promise<ApplyResult> {
    const timerName = typeof event.timer === 'string' ? event.timer : null;
    const found = await q.query<LockedRow>(SELECT_LOCKED, [target.id]);
    const row = found.rows[0];
    if (!row) {
      if (event.type !== def.createEvent) throw new UnknownActorError(target.id);
      const created = create(def, event);
      const { merchant, mode } = ownerOf(target, event);
      const inserted = await q.query(
        `INSERT INTO actors (id, kind, merchant, mode, machine, machine_version, state, snapshot, version)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb, 1) ON CONFLICT (id) DO NOTHING`,
        [target.id, def.kind, merchant, mode, def.kind, def.version, created.status, created.json],
      );
      if (inserted.rowCount === 0) throw new VersionConflictError(target.id);
      await this.write(q, 'insert', def, target, event, 1, null, created, merchant, mode);
      return resultOf('applied', def, target.id, 1, created.status, created.snapshot, merchant, mode, created.json);
    }
    if (event.type === def.createEvent && (await q.query(SELECT_CREATED_BY, [target.id, event.id])).rows.length > 0) {
      return resultOf('duplicate', def, target.id, row.version, row.state, row.snapshot, row.merchant, row.mode);
    }
    if (timerName !== null) {
      const t = await q.query<{ generation: number }>(SELECT_TIMER, [target.id, timerName]);
      if (event.generation !== t.rows[0]?.generation) {
        // A timer cancelled or rescheduled since this firing was published.
        const fresh = await this.markIgnored(q, target.id, event.id);
        return resultOf(fresh ? 'stale_timer' : 'duplicate', def, target.id, row.version, row.state, row.snapshot, row.merchant, row.mode);
      }
    }
    const next = step(def, row.snapshot, event);
    if (!next.accepted) {
      const fresh = await this.markIgnored(q, target.id, event.id);
      return resultOf(fresh ? 'ignored' : 'duplicate', def, target.id, row.version, row.state, row.snapshot, row.merchant, row.mode);
    }
    const version = row.version + 1;
    const res = await this.write(q, 'update', def, target, event, version, row.state, next, row.merchant, row.mode, companion);
    const counts = res.rows[0] as { fresh: number; n: number } | undefined;
    if (counts?.fresh === 0) return resultOf('duplicate', def, target.id, row.version, row.state, row.snapshot, row.merchant, row.mode);
    if (counts?.n !== 1) throw new VersionConflictError(target.id);
    const result = resultOf('applied', def, target.id, version, next.status, next.snapshot, row.merchant, row.mode, next.json);
    if (companion) result.companionWritten = true;
    return result;
  }

  /** Records an event that changed nothing; false when it had already been applied (a duplicate). */
  private async markIgnored(q: Queryable, actorId: string, eventId: string): Promise<boolean> {
    const r = await q.query<{ outcome: string }>(MARK_IGNORED, [actorId, eventId]);
    return r.rows[0]?.outcome === 'ignored';
  }

  private write(q: Queryable, how: WriteHow, def: DurableMachine, target: ActorTarget, event: EventBase & Record<string, unknown>, version: number, stateBefore: string | null, next: Accepted, merchant: string | null, mode: string | null, companion?: CreateCompanion) {
    return runWrite(q, planWrite(this.deps.registry, how, def, target, event, { version, stateBefore, merchant, mode }, next, companion));
  }

  private async afterCommit(result: ApplyResult, event: EventBase): Promise<void> {
    if (result.outcome === 'applied') {
      const item: SnapshotFeedItem = {
        id: result.actorId,
        kind: result.kind,
        merchant: result.merchant,
        mode: result.mode,
        version: result.version,
        status: result.status,
        snapshot: result.snapshot,
        event: event.type,
      };
      this.deps.bus.emit(`snap.${result.kind}.${result.actorId}`, item, result.snapshotJson === undefined ? undefined : feedJson(item, result.snapshotJson));
      this.deps.onOutbox?.();
    }
    await this.deps.hooks?.afterCommit?.(result, event);
  }

  /** Consumes actor events from the bus: ack after commit, redeliver on retryable failure. */
  async start(opts: ConsumeOptions = {}): Promise<void> {
    this.sub = await consumeActorEvents(this.deps.bus, (target, event) => this.applyInOrder(target, event), this.deps.onPoison, opts);
  }

  /**
   * Like `apply`, but after any earlier event for the same actor taken in this process. Events
   * that wait for the actor's step in flight are applied together in its next step (one
   * transaction, each caller its own result: step-together.ts), as applying them one by one
   * would have left them.
   */
  applyInOrder(target: ActorTarget, event: unknown): Promise<ApplyResult> {
    return this.mailboxes.post(target.id, { target, event });
  }

  /** Sends an event through the bus (the path for signals and timers). */
  async send(target: ActorTarget, event: EventBase & Record<string, unknown>): Promise<void> {
    const envelope: ActorEnvelope = { target, event };
    await this.deps.bus.publish(actorSubject(target.kind, target.id), envelope, { msgId: `${target.id}:${event.id}` });
  }

  async stop(): Promise<void> {
    await this.sub?.stop();
    this.sub = undefined;
  }
}
