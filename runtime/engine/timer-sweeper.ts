import { FORCE_CUSTOM_PLAN, type Db } from '../../storage/db.ts';
import type { ActorHost } from './actor-host.ts';
import { recordTimerSweep } from '../ops/metrics.ts';
import { Poller } from './poller.ts';

export interface TimerSweeperOptions {
  pollMs?: number;
  batch?: number;
  /** A firing published this long ago whose timer row still exists is published again. */
  refireMs?: number;
  /** Injected clock (Unix ms) so tests can move time. */
  now?: () => number;
}

interface DueTimer {
  actor_id: string;
  name: string;
  kind: string;
  event_type: string;
  generation: number;
  fire_ms: string;
}

/**
 * Claims due timers: locks them (SKIP LOCKED, so sweepers share the work) and marks them fired
 * in one statement; the marking finds the locked rows by ctid (a TID scan).
 */
export const SWEEP_SQL = `UPDATE timers SET fired_at = to_timestamp($1::double precision / 1000)
  WHERE ctid = ANY(ARRAY(
    SELECT ctid FROM timers
     WHERE fire_at <= to_timestamp($1::double precision / 1000)
       AND (fired_at IS NULL OR fired_at < to_timestamp($1::double precision / 1000) - ($2::double precision * interval '1 millisecond'))
     ORDER BY fire_at LIMIT $3 FOR UPDATE SKIP LOCKED))
  RETURNING actor_id, name, kind, event_type, generation, (extract(epoch FROM fire_at) * 1000)::bigint AS fire_ms`;

/**
 * Fires due timers as actor events. Rows are claimed with SKIP LOCKED, so several sweepers
 * never publish one firing at once; the event id carries the generation, so a repeat is
 * deduped and a firing for a rescheduled timer is dropped by the host as stale.
 */
export class TimerSweeper {
  private readonly poller: Poller;

  constructor(
    private readonly db: Db,
    private readonly host: ActorHost,
    private readonly opts: TimerSweeperOptions = {},
  ) {
    // A full batch may have left due timers behind: the next sweep runs at once.
    this.poller = new Poller(async () => (await this.sweepOnce()) === this.batch, { pollMs: opts.pollMs ?? 250 });
  }

  private get batch(): number {
    return this.opts.batch ?? 200;
  }

  start(): void {
    this.poller.start(this.opts.pollMs ?? 250);
  }

  async sweepOnce(): Promise<number> {
    const now = (this.opts.now ?? Date.now)();
    return this.db.tx(async (q) => {
      await q.query(FORCE_CUSTOM_PLAN);
      const { rows } = await q.query<DueTimer>(SWEEP_SQL, [now, this.opts.refireMs ?? 30_000, this.batch]);
      rows.sort((a, b) => Number(a.fire_ms) - Number(b.fire_ms));
      recordTimerSweep(rows.length, rows.length > 0 ? (now - Number(rows[0]!.fire_ms)) / 1000 : 0);
      // The claim commits only after every firing is published: a failed publish leaves the rows unclaimed.
      for (const t of rows) {
        await this.host.send(
          { kind: t.kind, id: t.actor_id },
          { type: t.event_type, id: `tmr:${t.name}:${t.generation}`, at: Number(t.fire_ms), timer: t.name, generation: t.generation },
        );
      }
      return rows.length;
    });
  }

  async stop(): Promise<void> {
    await this.poller.stop();
  }
}
