/**
 * Statechart extraction works on every machine the registry hosts with no per-machine code
 * (issue 24: "every machine kind of the project, present and future"): each state node, each
 * targeted transition and each guard name of the definition appears, checked against XState's
 * own state node tree; nested and parallel states come out with their paths; the layout
 * places every state and draws every arrow.
 */
import { and, createMachine, not, setup } from 'xstate';
import { describe, expect, it } from 'vitest';
import { machineRegistry } from '../machines.ts';
import { activeStates, extractGraph, guardName } from './graph.ts';
import { layoutGraph } from './layout.ts';

const registry = machineRegistry();

/** Every (source, event, target, guard) XState itself lists, walking the node tree. */
function transitionsOf(node: { path: string[]; transitions: Map<string, Array<{ target?: Array<{ path: string[] }>; guard?: unknown }>>; states: Record<string, unknown> }): Array<[string, string, string | null, string | null]> {
  const out: Array<[string, string, string | null, string | null]> = [];
  for (const [event, ts] of node.transitions) for (const t of ts) for (const target of t.target ?? [null]) out.push([node.path.join('.'), event, target ? target.path.join('.') : null, guardName(t.guard)]);
  for (const child of Object.values(node.states)) out.push(...transitionsOf(child as typeof node));
  return out;
}

describe('statechart of every registered machine', () => {
  it.each(registry.kinds())('%s: every state, transition, event and guard of the definition is in the graph', (kind) => {
    const def = registry.get(kind);
    const g = extractGraph(def.machine, def);
    expect(g.kind).toBe(kind);
    expect(g.version).toBe(def.version);
    expect(g.states.map((s) => s.id).sort()).toEqual(Object.keys(def.machine.root.states).sort());
    expect(g.states.filter((s) => s.initial)).toHaveLength(1);
    for (const [source, event, target, guard] of transitionsOf(def.machine.root as never)) {
      expect(g.events).toContain(event);
      if (target === null) {
        expect(g.states.find((s) => s.id === source)?.internal.some((t) => t.event === event && t.guard === guard)).toBe(true);
      } else {
        const edge = g.edges.find((e) => e.source === source && e.target === target);
        const on = edge?.on.find((t) => t.event === event);
        expect(on, `${source} --${event}--> ${target}`).toBeDefined();
        if (guard !== null) expect(on!.guard!.split(' | ')).toContain(guard);
      }
    }
  });

  it('names combined guards by their parts', () => {
    const def = registry.get('payment_intent');
    const g = extractGraph(def.machine, def);
    const all = [...g.edges.flatMap((e) => e.on), ...g.states.flatMap((s) => s.internal)].map((t) => t.guard ?? '');
    expect(all.some((x) => /^and\(\w+, /.test(x) || x.includes(' | and('))).toBe(true);
    expect(all.some((x) => x.includes('not('))).toBe(true);
    expect(all.join()).not.toContain('inline');
  });

  it.each(registry.kinds())('%s: the ELK layout places every state and routes every arrow', { timeout: 30_000 }, async (kind) => {
    const def = registry.get(kind);
    const laid = await layoutGraph(extractGraph(def.machine, def));
    for (const s of laid.states) expect(s.width * s.height).toBeGreaterThan(0);
    for (const e of laid.edges) expect(e.points.length).toBeGreaterThanOrEqual(2);
    expect(laid.width).toBeGreaterThan(0);
  });
});

// A future kind with nested and parallel states: nothing about it is known to the extractor.
const nested = setup({
  types: { events: {} as { type: 'go' } | { type: 'stop' } | { type: 'tick' } },
  guards: { ready: () => true, calm: () => true },
}).createMachine({
  id: 'future',
  initial: 'idle',
  states: {
    idle: { on: { go: { target: 'running', guard: 'ready' } } },
    running: {
      initial: 'warm',
      on: { stop: 'done' },
      states: {
        warm: { on: { tick: { target: 'hot', guard: and(['ready', not('calm')]) } } },
        hot: { on: { tick: { guard: 'calm' } } },
      },
    },
    both: { type: 'parallel', states: { a: { initial: 'x', states: { x: {} } }, b: { initial: 'y', states: { y: {} } } } },
    done: { type: 'final' },
  },
});

describe('statechart of a machine no code knows', () => {
  it('nested and parallel states, inline and combined guards', async () => {
    const g = extractGraph(nested, { kind: 'future', version: 1 });
    expect(g.states.map((s) => `${s.id}:${s.type}:${s.parent}`).sort()).toEqual(
      ['both.a.x:atomic:both.a', 'both.a:compound:both', 'both.b.y:atomic:both.b', 'both.b:compound:both', 'both:parallel:null', 'done:final:null', 'idle:atomic:null', 'running.hot:atomic:running', 'running.warm:atomic:running', 'running:compound:null'].sort(),
    );
    expect(g.states.filter((s) => s.initial).map((s) => s.id).sort()).toEqual(['both.a.x', 'both.b.y', 'idle', 'running.warm']);
    expect(g.edges.map((e) => `${e.source}>${e.target}:${e.on.map((t) => `${t.event}[${t.guard}]`).join()}`).sort()).toEqual(
      ['idle>running:go[ready]', 'running.warm>running.hot:tick[and(ready, not(calm))]', 'running>done:stop[null]'].sort(),
    );
    expect(g.states.find((s) => s.id === 'running.hot')?.internal).toEqual([{ event: 'tick', guard: 'calm' }]);
    const laid = await layoutGraph(g);
    const parent = laid.states.find((s) => s.id === 'running')!;
    const child = laid.states.find((s) => s.id === 'running.warm')!;
    // Children are drawn inside their parent (absolute coordinates).
    expect(child.x).toBeGreaterThanOrEqual(parent.x);
    expect(child.y).toBeGreaterThanOrEqual(parent.y);
    expect(child.x + child.width).toBeLessThanOrEqual(parent.x + parent.width);
    expect(child.y + child.height).toBeLessThanOrEqual(parent.y + parent.height);
  });

  it('an inline guard function is named "inline"', () => {
    const m = createMachine({ initial: 'a', states: { a: { on: { e: { target: 'b', guard: () => true } } }, b: {} } });
    expect(extractGraph(m, { kind: 'x', version: 1 }).edges[0]?.on).toEqual([{ event: 'e', guard: 'inline' }]);
  });

  it('active states of a snapshot value, nested and parallel', () => {
    expect(activeStates('PAID')).toEqual(['PAID']);
    expect(activeStates({ running: 'warm' })).toEqual(['running', 'running.warm']);
    expect(activeStates({ both: { a: 'x', b: 'y' } })).toEqual(['both', 'both.a', 'both.a.x', 'both.b', 'both.b.y']);
  });
});
