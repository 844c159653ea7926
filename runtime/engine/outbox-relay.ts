import { FORCE_CUSTOM_PLAN, type Db } from '../../storage/db.ts';
import type { Bus } from '../bus/types.ts';

export interface OutboxRelayOptions {
  pollMs?: number;
  batch?: number;
  /** Published rows older than this are deleted; the journal keeps the history. */
  retainMs?: number;
}

/**
 * Claims a batch of unpublished rows (SKIP LOCKED: relays share the work) and marks them
 * published in one statement; the marks become durable with the transaction, after the
 * publishes. Planned at each batch (FORCE_CUSTOM_PLAN): the cached plan, made while the outbox
 * was small, read every row the outbox keeps (a day of published rows) on every batch
 * (test/integration/plan-stability.test.ts).
 * The marks commit asynchronously (no WAL flush wait): if a database crash loses them, the
 * rows are published again and dropped as repeats by their message id (JetStream's duplicate
 * window is minutes, the async commit window well under a second) and by the consumers'
 * dedupe. What must be durable, the rows themselves, was committed by the engine.
 */
const CLAIM_SQL = `WITH async AS (SELECT set_config('synchronous_commit', 'off', true))
  UPDATE outbox SET published_at = now() FROM async
   WHERE ctid = ANY(ARRAY(SELECT ctid FROM outbox WHERE published_at IS NULL ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED))
  RETURNING id, msg_id, subject, payload`;

/**
 * Publishes outbox rows after commit. Rows are claimed with SKIP LOCKED so several relays
 * share the work; a crash between publish and mark re-publishes, and the bus drops the
 * repeat by its message id (consumers dedupe as well).
 */
export class OutboxRelay {
  private timer: NodeJS.Timeout | undefined;
  private running = false;
  private again = false;
  private stopped = true;
  private lastPrune = 0;

  constructor(
    private readonly db: Db,
    private readonly bus: Bus,
    private readonly opts: OutboxRelayOptions = {},
  ) {}

  start(): void {
    this.stopped = false;
    this.schedule(0);
  }

  /** Ask for a run now (after a commit that wrote rows). */
  nudge(): void {
    if (this.stopped) return;
    if (this.running) this.again = true;
    else this.schedule(0);
  }

  private schedule(ms: number): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.run(), ms);
  }

  private async run(): Promise<void> {
    if (this.running || this.stopped) return;
    this.running = true;
    let more = false;
    try {
      more = (await this.drainOnce()) === (this.opts.batch ?? 500);
      await this.prune();
    } catch {
      // Database or bus down: the next poll retries; nothing was marked published.
    } finally {
      this.running = false;
    }
    if (this.stopped) return;
    const again = more || this.again;
    this.again = false;
    this.schedule(again ? 0 : (this.opts.pollMs ?? 200));
  }

  /** Publishes one batch; returns how many rows it published. */
  async drainOnce(): Promise<number> {
    const batch = this.opts.batch ?? 500;
    return this.db.tx(async (q) => {
      await q.query(FORCE_CUSTOM_PLAN);
      const { rows } = await q.query<{ id: string; msg_id: string; subject: string; payload: unknown }>(CLAIM_SQL, [batch]);
      if (rows.length === 0) return 0;
      rows.sort((a, b) => Number(a.id) - Number(b.id));
      // The marks commit only after every row is published: a failed publish rolls them back.
      await Promise.all(rows.map((r) => this.bus.publish(r.subject, r.payload, { msgId: r.msg_id })));
      return rows.length;
    });
  }

  private async prune(): Promise<void> {
    const now = Date.now();
    if (now - this.lastPrune < 60_000) return;
    this.lastPrune = now;
    const retainMs = this.opts.retainMs ?? 24 * 3600_000;
    await this.db.query(`DELETE FROM outbox WHERE published_at < now() - ($1::double precision * interval '1 millisecond')`, [retainMs]);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    while (this.running) await new Promise((r) => setTimeout(r, 10));
  }
}
