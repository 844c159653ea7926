/**
 * The JSON the console's pages open with and read from `/ops/data/*` and `/ops/streams/*`
 * (produced by runtime/ops/ and gateway/ops/; ui/ imports no runtime code, so the shapes the
 * elements use are written here).
 */
export interface ChartState {
  id: string;
  key: string;
  parent: string | null;
  type: string;
  initial: boolean;
  internal: Array<{ event: string; guard: string | null }>;
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface ChartEdge {
  id: string;
  source: string;
  target: string;
  on: Array<{ event: string; guard: string | null }>;
  points: Array<{ x: number; y: number }>;
  label: { x: number; y: number; width: number; height: number; lines: string[] } | null;
}

export interface Chart {
  kind: string;
  version: number;
  machineId: string;
  width: number;
  height: number;
  states: ChartState[];
  edges: ChartEdge[];
  events: string[];
}

export interface Page<T> {
  rows: T[];
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

export interface ActorDetail extends ActorSummary {
  machine: string;
  machine_version: number;
  snapshot: { value: unknown; context: unknown; status?: string };
  created_at: string;
  active: string[];
}

export interface JournalEntry {
  seq: number;
  event_id: string;
  type: string;
  event: Record<string, unknown>;
  state_before: string | null;
  state_after: string;
  at: string;
  outbox: Array<{ msg_id: string; subject: string; published_at: string | null }>;
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

export interface ActorPageData {
  csrf: string;
  actor: ActorDetail;
  graph: Chart | null;
  journal: Page<JournalEntry>;
  timers: TimerRow[];
  outbox: OutboxRow[];
}

export interface LiveState {
  version: number;
  state: string;
  active: string[];
  event: string | null;
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

export interface TransitionItem {
  actor_id: string;
  kind: string;
  state: string;
  version: number;
  event: string;
}

export interface VerifyResult {
  actor_id: string;
  kind: string;
  equal: boolean;
  events: number;
  stored_version: number;
  machine_version: { stored: number; replayed: number };
  difference: { path: string; stored: unknown; replayed: unknown } | null;
  error: string | null;
  ms: number;
}
