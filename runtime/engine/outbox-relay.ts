import { FORCE_CUSTOM_PLAN, type Db } from '../../storage/db.ts';
import { RawJson, type Bus } from '../bus/types.ts';
import { recordOutboxBatch } from '../ops/metrics.ts';
import { Poller } from './poller.ts';

export interface OutboxRelayOptions {
  pollMs?: number;
  batch?: number;
  /** Published rows older than this are deleted; the journal keeps the history. */
  retainMs?: number;
  /** How long a nudge waits for more commits before claiming (default 20 ms). */
  gatherMs?: number;
  /** How often a claim scans from the first row instead of from the floor (see `Floor`). */
  fullScanMs?: number;
}

/**
 * Where a claim starts scanning. A published row leaves a dead entry in the pending index
 * until a vacuum removes it, and a scan from the first id walks all of them: with a day of
 * rows and no vacuum in between, that walk was most of the relay's cost (104 µs of statement
 * time per published row at 1,300 rows/s, pg_stat_statements). The floor skips them, exactly:
 * a row below the highest id a claim saw (`candidate.id`) got its id before that claim's
 * snapshot, so its transaction had either committed (the claim saw it) or was running with
 * an xid below that snapshot's xmax. Once the oldest running xid has passed that xmax, every
 * such transaction has ended, and the next claim from the old floor sees whatever they
 * committed; after it the floor moves past `candidate.id`. Rows another relay had locked
 * (SKIP LOCKED) and then failed to publish are that relay's to retry; should that relay die,
 * the periodic full scan finds them.
 */
interface Floor {
  from: bigint;
  candidate: { id: bigint; xmax: bigint } | null;
  lastFullScan: number;
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
   WHERE ctid = ANY(ARRAY(SELECT ctid FROM outbox WHERE published_at IS NULL AND id >= $2 ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED))
  RETURNING id, msg_id, subject, payload::text AS payload, pg_snapshot_xmax(pg_current_snapshot())::text AS xmax,
    extract(epoch FROM clock_timestamp() - created_at)::float8 AS age_s`;

// The oldest transaction still running, read before the claim: the claim's own snapshot has
// an xmin at least as high.
const BEGIN_SQL = `${FORCE_CUSTOM_PLAN}, pg_snapshot_xmin(pg_current_snapshot())::text AS xmin`;

/**
 * Publishes outbox rows after commit. Rows are claimed with SKIP LOCKED so several relays
 * share the work; a crash between publish and mark re-publishes, and the bus drops the
 * repeat by its message id (consumers dedupe as well).
 */
export class OutboxRelay {
  private readonly poller: Poller;
  private lastPrune = 0;
  private readonly floor: Floor = { from: 0n, candidate: null, lastFullScan: 0 };

  constructor(
    private readonly db: Db,
    private readonly bus: Bus,
    private readonly opts: OutboxRelayOptions = {},
  ) {
    // Database or bus down: the step fails, nothing was marked published, and the poller backs off.
    this.poller = new Poller(
      async () => {
        const more = (await this.drainOnce()) === (this.opts.batch ?? 500);
        await this.prune();
        return more;
      },
      { pollMs: opts.pollMs ?? 200, gatherMs: opts.gatherMs ?? 20 },
    );
  }

  start(): void {
    this.poller.start();
  }

  /**
   * Ask for a run soon (after a commit that wrote rows): within `gatherMs`, so that under load
   * a claim takes the rows of many commits. Each claim costs a transaction, a planning and its
   * round trips whatever its size; claiming after every commit made batches of a few rows.
   */
  nudge(): void {
    this.poller.nudge();
  }

  /** Publishes one batch; returns how many rows it published. */
  async drainOnce(): Promise<number> {
    const batch = this.opts.batch ?? 500;
    const floor = this.floor;
    const now = Date.now();
    const full = now - floor.lastFullScan >= (this.opts.fullScanMs ?? 30_000);
    const from = full ? 0n : floor.from;
    const { count, maxId, xmin, xmax, age } = await this.db.tx(async (q) => {
      const begin = await q.query<{ xmin: string }>(BEGIN_SQL);
      const { rows } = await q.query<{ id: string; msg_id: string; subject: string; payload: string; xmax: string; age_s: number }>(CLAIM_SQL, [batch, from.toString()]);
      const xmin = BigInt(begin.rows[0]!.xmin);
      if (rows.length === 0) return { count: 0, maxId: null, xmin, xmax: 0n, age: 0 };
      rows.sort((a, b) => Number(a.id) - Number(b.id));
      // The marks commit only after every row is published: a failed publish rolls them back.
      await Promise.all(rows.map((r) => this.bus.publish(r.subject, new RawJson(r.payload), { msgId: r.msg_id })));
      const last = rows[rows.length - 1]!;
      return { count: rows.length, maxId: BigInt(last.id), xmin, xmax: BigInt(last.xmax), age: Number(rows[0]!.age_s) };
    });
    recordOutboxBatch(count, age);
    // Only a committed batch moves the floor: a failed one changed nothing.
    if (full) floor.lastFullScan = now;
    const c = floor.candidate;
    if (c && xmin >= c.xmax && (count < batch || (maxId !== null && maxId >= c.id))) {
      if (c.id + 1n > floor.from) floor.from = c.id + 1n;
      floor.candidate = null;
    }
    if (!floor.candidate && maxId !== null) floor.candidate = { id: maxId, xmax };
    return count;
  }

  private async prune(): Promise<void> {
    const now = Date.now();
    if (now - this.lastPrune < 60_000) return;
    this.lastPrune = now;
    const retainMs = this.opts.retainMs ?? 24 * 3600_000;
    await this.db.query(`DELETE FROM outbox WHERE published_at < now() - ($1::double precision * interval '1 millisecond')`, [retainMs]);
  }

  async stop(): Promise<void> {
    await this.poller.stop();
  }
}
