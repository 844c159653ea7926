/**
 * How ActorHost's mailbox takes the events that waited for one actor: which of them can share
 * a step (`gatherable`), and the shared step itself (`stepTogether`): one transaction for all,
 * then each caller settled with its own result, in order. An event that fails its schema
 * fails only its caller; should the transaction fail, nothing of it was written and each event
 * is applied alone, so a failure reaches only the callers whose own event fails.
 */
import type { DurableMachine } from '../../machines/kit/durable.ts';
import type { Db } from '../../storage/db.ts';
import { recordActorEvent } from '../ops/metrics.ts';
import type { ActorTarget, ApplyResult } from './actor-types.ts';
import { applyBatch, type BatchEvent } from './batch-step.ts';
import { MalformedEventError } from './errors.ts';
import { settle, type Letter } from './mailbox.ts';
import type { MachineRegistry } from './registry.ts';
import type { CachedActor } from './snapshot-cache.ts';

export interface Posted {
  target: ActorTarget;
  event: unknown;
}

export type PostedLetter = Letter<Posted, ApplyResult>;

/** Events in one shared step at most: a bound on the statement's size and on a step's latency. */
export const MAX_TOGETHER = 64;

export interface StepPorts {
  db: Db;
  registry: MachineRegistry;
  /** One event on its own (the host's `apply`). */
  alone(target: ActorTarget, event: unknown): Promise<ApplyResult>;
  cached(id: string): CachedActor | undefined;
  /** The row after a shared step (undefined: what the process kept is stale). */
  keep(id: string, row: CachedActor | undefined): void;
  afterCommit(result: ApplyResult, event: BatchEvent): Promise<void>;
}

/**
 * Creates (they may find no row, or another actor's) and timer firings (their generation is
 * read first) go alone; so does a kind without a machine (its error is the caller's).
 */
function sharable(registry: MachineRegistry, p: Posted, kind: string): boolean {
  if (p.target.kind !== kind || typeof p.event !== 'object' || p.event === null) return false;
  let def: DurableMachine;
  try {
    def = registry.get(kind);
  } catch {
    return false;
  }
  const e = p.event as Record<string, unknown>;
  return e.type !== def.createEvent && typeof e.timer !== 'string';
}

/** How many letters from the head of `queue` share the next step. */
export function gatherable(registry: MachineRegistry, queue: readonly PostedLetter[]): number {
  const kind = queue[0]!.item.target.kind;
  let n = 0;
  while (n < queue.length && n < MAX_TOGETHER && sharable(registry, queue[n]!.item, kind)) n++;
  return Math.max(1, n);
}

export async function stepTogether(ports: StepPorts, letters: PostedLetter[]): Promise<void> {
  const first = letters[0]!.item.target;
  const t0 = performance.now();
  const def = ports.registry.get(first.kind);
  const valid: Array<{ letter: PostedLetter; event: BatchEvent }> = [];
  for (const letter of letters) {
    const parsed = def.events.safeParse(letter.item.event);
    if (parsed.success) valid.push({ letter, event: parsed.data as BatchEvent });
    else {
      recordActorEvent(first.kind, 'error', 0);
      letter.reject(new MalformedEventError(parsed.error.issues));
    }
  }
  if (valid.length < 2) {
    for (const { letter } of valid) await settle(letter, ports.alone(letter.item.target, letter.item.event));
    return;
  }
  let results: ApplyResult[];
  try {
    const cached = ports.cached(first.id);
    const plan = await applyBatch(ports.db, def, first.id, valid.map((v) => v.event), cached);
    ports.keep(first.id, plan.last);
    results = plan.results;
  } catch {
    ports.keep(first.id, undefined);
    for (const { letter } of valid) await settle(letter, ports.alone(letter.item.target, letter.item.event));
    return;
  }
  const seconds = (performance.now() - t0) / 1000;
  for (const [i, { letter, event }] of valid.entries()) {
    const r = results[i]!;
    try {
      await ports.afterCommit(r, event);
      recordActorEvent(first.kind, r.outcome, seconds);
      letter.resolve(r);
    } catch (err) {
      recordActorEvent(first.kind, 'error', seconds);
      letter.reject(err);
    }
  }
}
