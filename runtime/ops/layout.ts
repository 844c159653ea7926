/**
 * Lays a statechart out with ELK (elkjs, ADR 0029) on the server, once per machine kind and
 * version: the browser gets boxes and polylines in absolute coordinates and only draws them,
 * so it never loads the layout engine. Nested states are ELK children of their parent; every
 * edge sits at the root with hierarchy handling on, so its points are in root coordinates.
 * ELK runs in a worker thread (elk-worker.js): its layout is synchronous and long.
 */
import { existsSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import elkModule from 'elkjs/lib/elk.bundled.js';
import type { ElkExtendedEdge, ElkNode } from 'elkjs/lib/elk-api.js';
import type { GraphEdge, LaidEdge, LaidGraph, LaidState, StateGraph } from '../../machines/kit/console-view.ts';

export type { LaidGraph };

/** Text metrics for the 12 px system font the page draws with (a little generous). */
const CHAR_W = 7;
const LINE_H = 14;
const STATE_H = 40;
const PAD = 16;

// A CommonJS module whose typings declare an ES default: the constructor is also its `default`.
const ELK = elkModule.default;

const textWidth = (lines: string[]) => Math.max(...lines.map((l) => l.length)) * CHAR_W;

export function edgeLines(e: GraphEdge): string[] {
  return e.on.map((t) => (t.guard === null ? t.event : `${t.event} [${t.guard}]`));
}

function toElk(graph: StateGraph): ElkNode {
  const nodes = new Map<string, ElkNode>();
  const root: ElkNode = {
    id: '(root)',
    layoutOptions: {
      'elk.algorithm': 'layered',
      'elk.direction': 'RIGHT',
      'elk.hierarchyHandling': 'INCLUDE_CHILDREN',
      'elk.edgeRouting': 'ORTHOGONAL',
      'elk.layered.spacing.nodeNodeBetweenLayers': '48',
      'elk.spacing.nodeNode': '32',
      'elk.spacing.edgeLabel': '4',
      'elk.edgeLabels.inline': 'false',
      'elk.padding': `[top=${PAD},left=${PAD},bottom=${PAD},right=${PAD}]`,
    },
    children: [],
    edges: [],
  };
  for (const s of graph.states) {
    const hasChildren = graph.states.some((c) => c.parent === s.id);
    const node: ElkNode = hasChildren
      ? { id: s.id, labels: [{ text: s.key, width: textWidth([s.key]), height: LINE_H }], layoutOptions: { 'elk.padding': `[top=${PAD + LINE_H + 8},left=${PAD},bottom=${PAD},right=${PAD}]`, 'elk.nodeLabels.placement': 'INSIDE V_TOP H_LEFT' }, children: [] }
      : { id: s.id, width: Math.max(96, textWidth([s.key]) + 2 * PAD), height: STATE_H };
    nodes.set(s.id, node);
  }
  for (const s of graph.states) {
    const parent = s.parent === null ? root : nodes.get(s.parent);
    parent?.children?.push(nodes.get(s.id)!);
  }
  root.edges = graph.edges.map((e): ElkExtendedEdge => {
    const lines = edgeLines(e);
    return { id: e.id, sources: [e.source], targets: [e.target], labels: [{ id: `${e.id}.l`, text: lines.join('\n'), width: textWidth(lines), height: lines.length * LINE_H }] };
  });
  return root;
}

function collect(node: ElkNode, dx: number, dy: number, out: Map<string, { x: number; y: number; width: number; height: number }>): void {
  for (const c of node.children ?? []) {
    const x = dx + (c.x ?? 0);
    const y = dy + (c.y ?? 0);
    out.set(c.id, { x, y, width: c.width ?? 0, height: c.height ?? 0 });
    collect(c, x, y, out);
  }
}

const WORKER = new URL('./elk-worker.js', import.meta.url);

/**
 * One worker thread for the layouts in flight, gone when none is: a process lays out each
 * machine kind once, so the thread lives through the first visit's few layouts and no longer.
 */
class ElkThread {
  private worker: Worker | undefined;
  private readonly pending = new Map<number, { resolve: (n: ElkNode) => void; reject: (e: Error) => void }>();
  private seq = 0;

  run(root: ElkNode): Promise<ElkNode> {
    // A compiled build that does not ship the worker file lays out in-process.
    if (!existsSync(WORKER)) return new ELK().layout(root);
    const w = (this.worker ??= this.start());
    const id = ++this.seq;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      w.postMessage({ id, graph: root });
    });
  }

  private start(): Worker {
    const w = new Worker(WORKER);
    w.unref();
    w.on('message', (m: { id: number; laid?: ElkNode; error?: string }) => {
      const p = this.pending.get(m.id);
      this.pending.delete(m.id);
      if (m.laid) p?.resolve(m.laid);
      else p?.reject(new Error(`ELK layout failed: ${m.error ?? 'no result'}`));
      if (this.pending.size === 0) this.stop();
    });
    w.on('error', (err) => {
      for (const p of this.pending.values()) p.reject(err);
      this.pending.clear();
      this.stop();
    });
    return w;
  }

  private stop(): void {
    void this.worker?.terminate();
    this.worker = undefined;
  }
}

const thread = new ElkThread();

export async function layoutGraph(graph: StateGraph): Promise<LaidGraph> {
  const laid = await thread.run(toElk(graph));
  const boxes = new Map<string, { x: number; y: number; width: number; height: number }>();
  collect(laid, 0, 0, boxes);
  const states = graph.states.map((s): LaidState => ({ ...s, ...(boxes.get(s.id) ?? { x: 0, y: 0, width: 0, height: 0 }) }));
  const byId = new Map((laid.edges ?? []).map((e) => [e.id, e]));
  const edges = graph.edges.map((e): LaidEdge => {
    const out = byId.get(e.id);
    const points = (out?.sections ?? []).flatMap((sec) => [sec.startPoint, ...(sec.bendPoints ?? []), sec.endPoint]).map((p) => ({ x: p.x, y: p.y }));
    const l = out?.labels?.[0];
    return { ...e, points, label: l ? { x: l.x ?? 0, y: l.y ?? 0, width: l.width ?? 0, height: l.height ?? 0, lines: edgeLines(e) } : null };
  });
  return { ...graph, width: laid.width ?? 0, height: laid.height ?? 0, states, edges };
}

/** One layout per machine kind and version for the life of the process (definitions do not change while it runs). */
export class LayoutCache {
  private readonly byKey = new Map<string, Promise<LaidGraph>>();

  get(graph: StateGraph): Promise<LaidGraph> {
    const key = `${graph.kind}@${graph.version}`;
    let p = this.byKey.get(key);
    if (!p) {
      p = layoutGraph(graph);
      p.catch(() => this.byKey.delete(key));
      this.byKey.set(key, p);
    }
    return p;
  }
}
