/**
 * What the operator console shows about actors, as data: a machine's statechart (extracted
 * and laid out by runtime/ops/), actor rows, journal entries, timers, outbox rows, the
 * overview, live states and replay-verify results. Types only, shared by runtime/ops/ that
 * produces them and ui/src/ops/ that draws them.
 */

/** A transition by event, its guard as written (`legsShort`, `and(a, not(b))`), null for none. */
export interface GraphTransition {
  event: string;
  guard: string | null;
}

export interface GraphState {
  /** Path from the root, dot-separated (`PAID`, `open.idle`): what the snapshot value names. */
  id: string;
  key: string;
  parent: string | null;
  type: 'atomic' | 'compound' | 'parallel' | 'final' | 'history';
  initial: boolean;
  /** Events this state handles without leaving it (targetless transitions), with their guards. */
  internal: GraphTransition[];
}

/** Every transition from one state to another, drawn as one arrow. */
export interface GraphEdge {
  id: string;
  source: string;
  target: string;
  /** One per event, its guards the alternatives that lead this way (`a | b | else`). */
  on: GraphTransition[];
}

export interface StateGraph {
  kind: string;
  version: number;
  machineId: string;
  states: GraphState[];
  edges: GraphEdge[];
  /** Every event type the machine reacts to, sorted. */
  events: string[];
}

export interface Point {
  x: number;
  y: number;
}

export interface LaidState extends GraphState {
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface LaidEdge extends GraphEdge {
  points: Point[];
  label: { x: number; y: number; width: number; height: number; lines: string[] } | null;
}

/** A statechart with boxes and polylines in one coordinate space. */
export interface LaidGraph extends Omit<StateGraph, 'states' | 'edges'> {
  width: number;
  height: number;
  states: LaidState[];
  edges: LaidEdge[];
}

export interface Page<T> {
  rows: T[];
  /** Pass back to get the next page; null on the last one. */
  next: string | null;
}

export interface ActorSummary {
  id: string;
  kind: string;
  state: string;
  merchant: string | null;
  mode: string | null;
  version: number;
  updated_at: string;
}

export interface ActorRow extends ActorSummary {
  machine: string;
  machine_version: number;
  snapshot: { value: unknown; context: unknown; status?: string };
  created_at: string;
}

export interface JournalEntry {
  seq: number;
  event_id: string;
  type: string;
  event: Record<string, unknown>;
  state_before: string | null;
  state_after: string;
  at: string;
  /** Outbox rows this step wrote that are still retained (webhooks; published rows age out). */
  outbox: Array<{ msg_id: string; subject: string; published_at: string | null }>;
  /** Timers this step scheduled that are still set (their generation is this seq). */
  timers: Array<{ name: string; fire_at: string }>;
}

export interface TimerRow {
  name: string;
  event_type: string;
  fire_at: string;
  generation: number;
  fired_at: string | null;
}

export interface OutboxRow {
  id: string;
  msg_id: string;
  subject: string;
  payload: unknown;
  created_at: string;
  published_at: string | null;
}

export interface Overview {
  at: string;
  actors: Array<{ kind: string; state: string; count: number }>;
  recent: Array<{ actor_id: string; kind: string; seq: number; type: string; state_before: string | null; state_after: string; at: string }>;
  outbox: { pending: number; oldest_lag_ms: number | null };
  timers: { due: number; pending: number; oldest_due_lag_ms: number | null };
  webhooks: Array<{ endpoint: string; merchant: string; mode: string; url: string; status: string; failing: number; last_error: string | null; last_status: number | null }>;
  indexers: Array<{ network: string; height: number; updated_at: string; node_height: number | null; lag_blocks: number | null }>;
}

/** One commit as the overview stream sends it. */
export interface TransitionItem {
  actor_id: string;
  kind: string;
  state: string;
  version: number;
  event: string;
}

/** One commit as an actor's stream sends it: `active` the state nodes lit; `event` null for the opening state. */
export interface LiveState {
  version: number;
  state: string;
  active: string[];
  event: string | null;
}

export interface VerifyResult {
  actor_id: string;
  kind: string;
  equal: boolean;
  events: number;
  stored_version: number;
  /** The machine version the stored row names and the one replayed with. */
  machine_version: { stored: number; replayed: number };
  /** Where replayed and stored first differ (`context.tx.hash`), with both values; null when equal. */
  difference: { path: string; stored: unknown; replayed: unknown } | null;
  /** Why the replay could not run (an event the machine no longer accepts, an empty journal). */
  error: string | null;
  ms: number;
}
