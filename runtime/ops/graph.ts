/**
 * The statechart of any durable machine, read from its XState definition (the state node
 * tree the machine carries), so every kind the registry hosts is drawn with no code of its
 * own: states and nested states, transitions by event with their guards named.
 */
import type { AnyStateMachine } from 'xstate';
import type { GraphEdge, GraphState, GraphTransition, StateGraph } from '../../machines/kit/console-view.ts';

export type { GraphEdge, GraphState, GraphTransition, StateGraph };

/** The parts of an XState state node read here (its public runtime shape). */
interface NodeLike {
  key: string;
  type: GraphState['type'];
  path: string[];
  states: Record<string, NodeLike>;
  initial?: { target: readonly NodeLike[] };
  transitions: Map<string, readonly TransitionLike[]>;
  always?: readonly TransitionLike[];
}

interface TransitionLike {
  eventType: string;
  target?: readonly NodeLike[];
  guard?: unknown;
}

/** `and`/`or`/`not` are functions carrying their operands; named guards are strings or `{ type }`. */
export function guardName(g: unknown): string | null {
  if (g === undefined || g === null) return null;
  if (typeof g === 'string') return g;
  if (typeof g === 'function') {
    const fn = g as { name?: string; guards?: unknown[] };
    if (Array.isArray(fn.guards) && (fn.name === 'and' || fn.name === 'or' || fn.name === 'not')) {
      return `${fn.name}(${fn.guards.map((x) => guardName(x) ?? '?').join(', ')})`;
    }
    // `guard: () => …` takes its name from the property: that names nothing.
    return fn.name && fn.name !== 'guard' ? fn.name : 'inline';
  }
  if (typeof g === 'object' && 'type' in g && typeof g.type === 'string') return g.type;
  return 'inline';
}

const pathOf = (n: NodeLike): string => n.path.join('.');

export function extractGraph(machine: AnyStateMachine, meta: { kind: string; version: number }): StateGraph {
  const states: GraphState[] = [];
  const edges: GraphEdge[] = [];
  const events = new Set<string>();
  const byEdge = new Map<string, GraphEdge>();

  const visit = (node: NodeLike, parent: NodeLike | null): void => {
    const id = pathOf(node);
    const state: GraphState | null =
      parent === null
        ? null
        : {
            id,
            key: node.key,
            parent: parent.path.length === 0 ? null : pathOf(parent),
            type: node.type,
            initial: parent.initial?.target.some((t) => t === node) ?? false,
            internal: [],
          };
    const all: TransitionLike[] = [...[...node.transitions.values()].flat(), ...(node.always ?? [])];
    for (const t of all) {
      const event = t.eventType === '' ? '(always)' : t.eventType;
      events.add(event);
      const guard = guardName(t.guard);
      const targets = t.target ?? [];
      if (targets.length === 0) {
        if (state) state.internal.push({ event, guard });
        continue;
      }
      for (const target of targets) {
        const source = id === '' ? '(root)' : id;
        const key = `${source}>${pathOf(target)}`;
        let edge = byEdge.get(key);
        if (!edge) {
          edge = { id: `e${edges.length}`, source, target: pathOf(target), on: [] };
          byEdge.set(key, edge);
          edges.push(edge);
        }
        const same = edge.on.find((o) => o.event === event);
        if (!same) edge.on.push({ event, guard });
        else {
          // An unguarded alternative reads "else": it is taken when the guards before it fail.
          const have = same.guard === null ? ['else'] : same.guard.split(' | ');
          const alt = guard ?? 'else';
          if (!have.includes(alt)) same.guard = [...have, alt].join(' | ');
        }
      }
    }
    if (state) states.push(state);
    for (const child of Object.values(node.states)) visit(child, node);
  };
  visit(machine.root, null);
  return { kind: meta.kind, version: meta.version, machineId: machine.id, states, edges: edges.filter((e) => e.source !== '(root)'), events: [...events].sort() };
}

/**
 * The state nodes a snapshot value is in, as graph ids: `"PAID"` → `["PAID"]`,
 * `{ open: "idle" }` → `["open", "open.idle"]`, parallel regions each with their path.
 */
export function activeStates(value: unknown, prefix = ''): string[] {
  if (typeof value === 'string') return [prefix ? `${prefix}.${value}` : value];
  if (value === null || typeof value !== 'object') return [];
  const out: string[] = [];
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    const here = prefix ? `${prefix}.${k}` : k;
    out.push(here, ...activeStates(v, here));
  }
  return out;
}
