/**
 * PostgreSQL's WAL and checkpoint counters around a benchmark run (`pg_stat_wal`,
 * `pg_stat_bgwriter`, both cluster-wide). Full-page images are written for the first change
 * of every page after a checkpoint starts, so a run that overlaps a checkpoint writes far more
 * WAL per operation for the same work: the figure that tells such a run from the others.
 */
import type { Db } from '../../storage/db.ts';

export interface WalCounters {
  records: number;
  fpi: number;
  bytes: number;
  checkpoints: number;
}

export async function walCounters(db: Db): Promise<WalCounters> {
  const { rows } = await db.query<{ records: string; fpi: string; bytes: string; checkpoints: string }>(
    `SELECT w.wal_records AS records, w.wal_fpi AS fpi, w.wal_bytes AS bytes, b.checkpoints_timed + b.checkpoints_req AS checkpoints
       FROM pg_stat_wal w, pg_stat_bgwriter b`,
  );
  const r = rows[0]!;
  return { records: Number(r.records), fpi: Number(r.fpi), bytes: Number(r.bytes), checkpoints: Number(r.checkpoints) };
}

/** "WAL per event …" for `ops` operations between two readings. */
export function walLine(before: WalCounters, after: WalCounters, ops: number): string {
  const bytes = (after.bytes - before.bytes) / ops;
  const fpi = ((after.fpi - before.fpi) / ops) * 1000;
  const cps = after.checkpoints - before.checkpoints;
  return `WAL per event ${Math.round(bytes)} bytes, ${fpi.toFixed(0)} full-page images per 1,000 events, ${cps} checkpoint${cps === 1 ? '' : 's'} started`;
}
