/**
 * The process's Prometheus series (DESIGN §6, §7 "Operator console"), in one registry served
 * at `/metrics` (gateway/http/metrics.ts). Every label takes values from a small closed set:
 * route templates, machine kinds, outcomes, networks. Never an id, a raw path or a merchant.
 *
 * Hot paths (every request, every actor step) call the small recorders below, which keep the
 * labelled children in maps: prom-client's `inc(labels)` hashes a label object per call,
 * a cached child is a plain number increment.
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

export const registry = new Registry();
collectDefaultMetrics({ register: registry });

const httpRequests = new Counter({
  name: 'anm_http_requests_total',
  help: 'HTTP requests answered, by app, method, route template and status code.',
  labelNames: ['app', 'method', 'route', 'status'] as const,
  registers: [registry],
});

const actorEvents = new Counter({
  name: 'anm_actor_events_total',
  help: 'Events offered to actors, by machine kind and outcome (applied, ignored, duplicate, stale_timer, error).',
  labelNames: ['kind', 'outcome'] as const,
  registers: [registry],
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

type Inc = { inc(n?: number): void };

// route -> "METHOD status" -> child. Route templates and methods are the app's own: bounded.
const httpChildren = new Map<string, Map<string, Inc>>();

/** One answered request; `route` is the matched template, or undefined when nothing matched. */
export function recordHttp(app: string, method: string, route: string | undefined, status: number): void {
  const r = route ?? 'unmatched';
  const key = `${app} ${r}`;
  let byStatus = httpChildren.get(key);
  if (!byStatus) httpChildren.set(key, (byStatus = new Map<string, Inc>()));
  const k = `${method} ${status}`;
  let child = byStatus.get(k);
  if (!child) byStatus.set(k, (child = httpRequests.labels(app, method, r, String(status))));
  child.inc();
}

interface KindChildren {
  step: { observe(v: number): void };
  outcomes: Map<string, Inc>;
}
const kindChildren = new Map<string, KindChildren>();

/** One event offered to an actor of `kind`, its outcome, and how long it took. */
export function recordActorEvent(kind: string, outcome: string, seconds: number): void {
  let c = kindChildren.get(kind);
  if (!c) kindChildren.set(kind, (c = { step: stepSeconds.labels(kind), outcomes: new Map<string, Inc>() }));
  let o = c.outcomes.get(outcome);
  if (!o) c.outcomes.set(outcome, (o = actorEvents.labels(kind, outcome)));
  o.inc();
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
