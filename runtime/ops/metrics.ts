/**
 * The process's Prometheus series (DESIGN §6, §7 "Operator console"), in one registry served
 * at `/metrics` (gateway/http/metrics.ts). Every label takes values from a small closed set:
 * route templates, machine kinds, outcomes, networks. Never an id, a raw path or a merchant.
 *
 * Hot paths (every request, every actor step) call the small recorders below. prom-client's
 * `inc(labels)` (and a child's `inc()`, which calls it) hashes the label object into a string
 * on every call; the request and event counters instead add to plain numbers kept per label
 * set, and hand the sums to prom-client when a scrape collects them.
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

export const registry = new Registry();
collectDefaultMetrics({ register: registry });

/** Counts for one label set, not yet handed to prom-client. */
interface Pending {
  labels: Record<string, string>;
  n: number;
}

function flush(counter: Counter, pending: Iterable<Pending>): void {
  for (const p of pending) {
    if (p.n === 0) continue;
    counter.inc(p.labels, p.n);
    p.n = 0;
  }
}

// Per app: route template -> method -> status -> counts. All bounded by the app's own routes.
type RouteCounts = Map<string, Map<string, Map<number, Pending>>>;
const httpPending: RouteCounts[] = [];
new Counter({
  name: 'anm_http_requests_total',
  help: 'HTTP requests answered, by app, method, route template and status code.',
  labelNames: ['app', 'method', 'route', 'status'] as const,
  registers: [registry],
  collect() {
    for (const routes of httpPending) for (const byMethod of routes.values()) for (const byStatus of byMethod.values()) flush(this, byStatus.values());
  },
});

interface KindPending {
  step: { observe(v: number): void };
  outcomes: Map<string, Pending>;
}
const kindPending = new Map<string, KindPending>();
new Counter({
  name: 'anm_actor_events_total',
  help: 'Events offered to actors, by machine kind and outcome (applied, ignored, duplicate, stale_timer, error).',
  labelNames: ['kind', 'outcome'] as const,
  registers: [registry],
  collect() {
    for (const k of kindPending.values()) flush(this, k.outcomes.values());
  },
});

const stepSeconds = new Histogram({
  name: 'anm_actor_step_seconds',
  help: 'Time to apply one event to an actor (transition and its transaction), by machine kind.',
  labelNames: ['kind'] as const,
  buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
  registers: [registry],
});

const outboxLag = new Gauge({
  name: 'anm_outbox_lag_seconds',
  help: 'Age of the oldest outbox row in the relay’s last claimed batch (0 when the batch was empty).',
  registers: [registry],
});

const outboxPublished = new Counter({
  name: 'anm_outbox_published_total',
  help: 'Outbox rows published to the bus by this process.',
  registers: [registry],
});

const timerLag = new Gauge({
  name: 'anm_timer_lag_seconds',
  help: 'How late the most overdue timer of the sweeper’s last batch fired (0 when none was due).',
  registers: [registry],
});

const timersFired = new Counter({
  name: 'anm_timers_fired_total',
  help: 'Timer firings published by this process.',
  registers: [registry],
});

const webhookDeliveries = new Counter({
  name: 'anm_webhook_deliveries_total',
  help: 'Webhook delivery attempts, by outcome (succeeded, retried, failed, disabled).',
  labelNames: ['outcome'] as const,
  registers: [registry],
});

const indexerHead = new Gauge({
  name: 'anm_indexer_head_height',
  help: 'Chain head height the indexer last read, per network.',
  labelNames: ['network'] as const,
  registers: [registry],
});

const indexerHeight = new Gauge({
  name: 'anm_indexer_indexed_height',
  help: 'Height of the last block the indexer recorded, per network.',
  labelNames: ['network'] as const,
  registers: [registry],
});

const indexerLag = new Gauge({
  name: 'anm_indexer_lag_blocks',
  help: 'Blocks between the chain head and the last recorded block, per network.',
  labelNames: ['network'] as const,
  registers: [registry],
});

/** Open server-sent event streams per surface, read from their owners at scrape time. */
const sseSources = new Map<string, () => number>();
new Gauge({
  name: 'anm_sse_streams_open',
  help: 'Server-sent event streams open, by surface (checkout, ops, dashboard).',
  labelNames: ['surface'] as const,
  registers: [registry],
  collect() {
    this.reset();
    const sums = new Map<string, number>();
    for (const [key, read] of sseSources) {
      const surface = key.slice(0, key.indexOf('#'));
      sums.set(surface, (sums.get(surface) ?? 0) + read());
    }
    for (const [surface, n] of sums) this.set({ surface }, n);
  },
});

/**
 * The request counter of one app (`app` label). The returned function takes one answered
 * request; `route` is the matched template, or undefined when nothing matched.
 */
export function httpRecorder(app: string): (method: string, route: string | undefined, status: number) => void {
  const routes: RouteCounts = new Map();
  httpPending.push(routes);
  return (method, route = 'unmatched', status) => {
    let byMethod = routes.get(route);
    if (!byMethod) routes.set(route, (byMethod = new Map<string, Map<number, Pending>>()));
    let byStatus = byMethod.get(method);
    if (!byStatus) byMethod.set(method, (byStatus = new Map<number, Pending>()));
    let p = byStatus.get(status);
    if (!p) byStatus.set(status, (p = { labels: { app, method, route, status: String(status) }, n: 0 }));
    p.n++;
  };
}

/** One event offered to an actor of `kind`, its outcome, and how long it took. */
export function recordActorEvent(kind: string, outcome: string, seconds: number): void {
  let c = kindPending.get(kind);
  if (!c) kindPending.set(kind, (c = { step: stepSeconds.labels(kind), outcomes: new Map<string, Pending>() }));
  let p = c.outcomes.get(outcome);
  if (!p) c.outcomes.set(outcome, (p = { labels: { kind, outcome }, n: 0 }));
  p.n++;
  c.step.observe(seconds);
}

/** A published outbox batch: its size and the age of its oldest row. */
export function recordOutboxBatch(rows: number, oldestAgeSeconds: number): void {
  outboxLag.set(rows > 0 ? oldestAgeSeconds : 0);
  if (rows > 0) outboxPublished.inc(rows);
}

/** A timer sweep: how many fired and how late the most overdue one was. */
export function recordTimerSweep(fired: number, maxLateSeconds: number): void {
  timerLag.set(fired > 0 ? Math.max(0, maxLateSeconds) : 0);
  if (fired > 0) timersFired.inc(fired);
}

export type DeliveryOutcome = 'succeeded' | 'retried' | 'failed' | 'disabled';

export function recordWebhookDelivery(outcome: DeliveryOutcome): void {
  webhookDeliveries.labels(outcome).inc();
}

const chainHeights = new Map<string, { head: number; indexed: number }>();

function chainOf(network: string): { head: number; indexed: number } {
  let c = chainHeights.get(network);
  if (!c) chainHeights.set(network, (c = { head: -1, indexed: -1 }));
  return c;
}

export function recordIndexerHead(network: string, head: number): void {
  const c = chainOf(network);
  c.head = head;
  indexerHead.labels(network).set(head);
  if (c.indexed >= 0) indexerLag.labels(network).set(Math.max(0, head - c.indexed));
}

export function recordIndexedBlock(network: string, height: number): void {
  const c = chainOf(network);
  c.indexed = height;
  indexerHeight.labels(network).set(height);
  indexerLag.labels(network).set(Math.max(0, Math.max(c.head, height) - height));
}

let sseSeq = 0;
/**
 * Counts a surface's open streams at each scrape by calling `read`; returns the function that
 * stops counting (an app closing). Several apps of one surface in a process add up.
 */
export function trackSseStreams(surface: string, read: () => number): () => void {
  const key = `${surface}#${++sseSeq}`;
  sseSources.set(key, read);
  return () => void sseSources.delete(key);
}

/** The Prometheus text exposition of every series of this process. */
export function scrape(): Promise<string> {
  return registry.metrics();
}

export const scrapeContentType = registry.contentType;
