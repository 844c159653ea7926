import type { Db } from '../../storage/db.ts';
import type { Bus, BusMessage, Subscription } from '../bus/types.ts';
import { SerialWrites } from './serial-writes.ts';

/**
 * Durable consumer of `fx.webhook.>`: records each event once and one delivery per
 * (event id, endpoint) in one transaction, then acks. Messages are grouped into one
 * transaction per batch (group commit); a failed batch naks every message in it.
 * An event whose merchant has no endpoint in that mode is recorded as skipped (ADR 0009).
 */

/** What the outbox relay publishes for an `emitWebhook` effect (runtime/engine/actor-host.ts). */
export interface WebhookFact {
  merchant: string | null;
  mode: string | null;
  actor_id: string;
  kind: string;
  event: { id: string; type: string; created: number; data: Record<string, unknown> };
}

interface Row {
  id: string;
  merchant: string;
  mode: string;
  type: string;
  created: number;
  actor_id: string;
  body: string;
}

export interface IntakeOptions {
  durable?: string;
  concurrency?: number;
  /** Redelivery to another process when one took a fact and died before acking it. */
  ackWaitMs?: number;
  maxBatch?: number;
  /** Called after a batch created pending deliveries, so the worker need not wait for its poll. */
  onDeliveries?: () => void;
  now?: () => number;
}

// Everything in one statement: events once (a re-driven fact conflicts and stops here), then
// one delivery per endpoint of the merchant and mode, `disabled` for a disabled endpoint.
const INTAKE_SQL = `
  WITH input AS (
    SELECT * FROM jsonb_to_recordset($1::jsonb) AS x(id text, merchant text, mode text, type text, created bigint, actor_id text, body text)
  ), ev AS (
    INSERT INTO webhook_events (id, merchant, mode, type, created, actor_id, body, skipped, received_at)
    SELECT i.id, i.merchant, i.mode, i.type, i.created, i.actor_id, i.body,
           NOT EXISTS (SELECT 1 FROM webhook_endpoints e WHERE e.merchant = i.merchant AND e.mode = i.mode), $2
      FROM input i
    ON CONFLICT (id) DO NOTHING
    RETURNING id, merchant, mode, skipped
  ), d AS (
    INSERT INTO webhook_deliveries (id, event_id, endpoint, merchant, mode, status, next_attempt_at, created_at, updated_at)
    SELECT 'wd_' || substr(md5(ev.id || ':' || e.id), 1, 24), ev.id, e.id, ev.merchant, ev.mode,
           CASE e.status WHEN 'active' THEN 'pending' ELSE 'disabled' END,
           CASE e.status WHEN 'active' THEN $2::timestamptz END, $2, $2
      FROM ev JOIN webhook_endpoints e ON e.merchant = ev.merchant AND e.mode = ev.mode
    ON CONFLICT (event_id, endpoint) DO NOTHING
    RETURNING status
  )
  SELECT (SELECT count(*) FROM ev)::int AS events,
         (SELECT count(*) FROM ev WHERE skipped)::int AS skipped,
         (SELECT count(*) FROM d WHERE status = 'pending')::int AS pending`;

export interface IntakeStats {
  events: number;
  skipped: number;
  pending: number;
}

export function factToRow(fact: WebhookFact): Row | null {
  const e = fact?.event;
  if (!e || typeof e.id !== 'string' || typeof e.type !== 'string') return null;
  return {
    id: e.id,
    merchant: fact.merchant ?? '',
    mode: fact.mode ?? 'test',
    type: e.type,
    created: e.created,
    actor_id: fact.actor_id,
    // The raw body, fixed once: every attempt sends (and signs) exactly these bytes.
    body: JSON.stringify({ id: e.id, type: e.type, created: e.created, data: e.data }),
  };
}

/** Records facts and their deliveries in one statement (the intake, the reconciler, test events). */
export async function recordWebhookFacts(db: Pick<Db, 'query'>, rows: readonly Row[], now: Date): Promise<IntakeStats> {
  const unique = [...new Map(rows.map((r) => [r.id, r])).values()];
  // One statement is one transaction: events and their deliveries commit together.
  return (await db.query<IntakeStats>(INTAKE_SQL, [JSON.stringify(unique), now])).rows[0]!;
}

export class WebhookIntake {
  private sub: Subscription | undefined;
  private readonly writes: SerialWrites<Row>;
  readonly stats: IntakeStats = { events: 0, skipped: 0, pending: 0 };

  constructor(
    private readonly db: Db,
    private readonly bus: Bus,
    private readonly opts: IntakeOptions = {},
  ) {
    this.writes = new SerialWrites((rows) => this.record(rows), opts.maxBatch ?? 500);
  }

  async start(): Promise<void> {
    this.sub = await this.bus.consume({
      durable: this.opts.durable ?? 'webhook-intake',
      subject: 'fx.webhook.>',
      concurrency: this.opts.concurrency ?? 256,
      ...(this.opts.ackWaitMs ? { ackWaitMs: this.opts.ackWaitMs } : {}),
      handler: (msg) => this.handle(msg),
    });
  }

  private async handle(msg: BusMessage): Promise<void> {
    const row = factToRow(msg.data as WebhookFact);
    if (!row) {
      // Not a webhook fact: nothing could ever deliver it.
      msg.ack();
      return;
    }
    try {
      await this.writes.push(row);
      msg.ack();
    } catch {
      msg.nak(Math.min(30_000, 250 * 2 ** Math.min(msg.deliveries, 7)));
    }
  }

  /** Records facts (also used by the outbox reconciler and tests); returns what it created. */
  async record(rows: readonly Row[]): Promise<IntakeStats> {
    const res = await recordWebhookFacts(this.db, rows, new Date((this.opts.now ?? Date.now)()));
    this.stats.events += res.events;
    this.stats.skipped += res.skipped;
    this.stats.pending += res.pending;
    if (res.pending > 0) this.opts.onDeliveries?.();
    return res;
  }

  /**
   * Takes webhook facts still in the outbox that never reached the intake. The in-process
   * bus keeps nothing across a crash, so the embedded runtime runs this on start; with
   * JetStream the stream already holds them and this finds nothing.
   */
  async reconcileFromOutbox(batch = 1000): Promise<number> {
    let total = 0;
    let after = '0';
    for (;;) {
      const { rows } = await this.db.query<{ id: string; payload: WebhookFact }>(
        `SELECT o.id, o.payload FROM outbox o
          WHERE o.id > $1 AND o.subject LIKE 'fx.webhook.%'
            AND NOT EXISTS (SELECT 1 FROM webhook_events w WHERE w.id = o.payload->'event'->>'id')
          ORDER BY o.id LIMIT $2`,
        [after, batch],
      );
      if (rows.length === 0) return total;
      after = rows[rows.length - 1]!.id;
      const facts = rows.map((r) => factToRow(r.payload)).filter((r): r is Row => r !== null);
      total += (await this.record(facts)).events;
    }
  }

  async stop(): Promise<void> {
    await this.sub?.stop();
    this.sub = undefined;
    while (this.writes.busy) await new Promise((r) => setTimeout(r, 10));
  }
}
