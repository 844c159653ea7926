/**
 * Replay-verify: rebuild an actor's snapshot from its journal through its machine (the first
 * event creates, the rest step, as the engine did) and compare it with the stored snapshot.
 * Equal means the journal alone explains the actor; a difference names the first path where
 * the two part, which is where to look.
 */
import { isDeepStrictEqual } from 'node:util';
import type { VerifyResult } from '../../machines/kit/console-view.ts';
import type { EventBase } from '../../machines/kit/durable.ts';

export type { VerifyResult };
import { replay, type PersistedSnapshot } from '../../machines/kit/step.ts';
import type { MachineRegistry } from '../engine/registry.ts';

/** The parts both snapshots carry; what `persist` writes (machines/kit/step.ts). */
function comparable(s: PersistedSnapshot): Record<string, unknown> {
  return { status: s.status ?? 'active', value: s.value, context: s.context };
}

/** The first path at which `a` and `b` differ (objects by key, arrays by index), or null. */
export function firstDifference(a: unknown, b: unknown, path = ''): { path: string; stored: unknown; replayed: unknown } | null {
  if (isDeepStrictEqual(a, b)) return null;
  const objects = typeof a === 'object' && a !== null && typeof b === 'object' && b !== null && Array.isArray(a) === Array.isArray(b);
  if (!objects) return { path: path || '(root)', stored: a, replayed: b };
  const ra = a as Record<string, unknown>;
  const rb = b as Record<string, unknown>;
  for (const k of [...new Set([...Object.keys(ra), ...Object.keys(rb)])].sort()) {
    const d = firstDifference(ra[k], rb[k], path ? `${path}.${k}` : k);
    if (d) return d;
  }
  return { path: path || '(root)', stored: a, replayed: b };
}

export interface VerifyInput {
  id: string;
  kind: string;
  version: number;
  machine_version: number;
  snapshot: PersistedSnapshot;
  events: ReadonlyArray<{ event: Record<string, unknown> }>;
}

export function verifyReplay(registry: MachineRegistry, a: VerifyInput): VerifyResult {
  const t0 = performance.now();
  const def = registry.get(a.kind);
  const base = { actor_id: a.id, kind: a.kind, events: a.events.length, stored_version: a.version, machine_version: { stored: a.machine_version, replayed: def.version } };
  try {
    // The journal holds what the engine validated; it is replayed as stored (JSON), as a restart would.
    const rebuilt = replay(def, a.events.map((e) => e.event as unknown as EventBase));
    const difference = firstDifference(comparable(a.snapshot), comparable(rebuilt));
    return { ...base, equal: difference === null, difference, error: null, ms: performance.now() - t0 };
  } catch (err) {
    return { ...base, equal: false, difference: null, error: err instanceof Error ? err.message : String(err), ms: performance.now() - t0 };
  }
}
