/**
 * WAL written for the tables of one schema between two LSNs, by relation and record type,
 * read with `pg_walinspect` (PostgreSQL 15+; created on first use, which needs a superuser).
 * Unlike `pg_stat_wal`, which counts the whole cluster, it leaves out what other work on the
 * same server wrote meanwhile. Commit records count under "(commit)", for the transactions
 * that touched the schema.
 */
import type { Queryable } from '../../storage/db.ts';

export interface WalShare {
  relation: string;
  recordType: string;
  records: number;
  bytes: number;
}

export async function currentLsn(db: Queryable): Promise<string> {
  return (await db.query<{ lsn: string }>(`SELECT pg_current_wal_insert_lsn()::text AS lsn`)).rows[0]!.lsn;
}

/** Null when pg_walinspect cannot be had on this server. */
export async function walByRelation(db: Queryable, schema: string, from: string, to: string): Promise<WalShare[] | null> {
  try {
    await db.query(`CREATE EXTENSION IF NOT EXISTS pg_walinspect SCHEMA public`);
  } catch {
    return null;
  }
  // pg_walinspect reads only flushed WAL; an asynchronous commit's may still wait for the WAL writer.
  while ((await db.query<{ ok: boolean }>(`SELECT pg_current_wal_flush_lsn() >= $1::pg_lsn AS ok`, [to])).rows[0]?.ok === false) await new Promise((r) => setTimeout(r, 20));
  const { rows } = await db.query<{ relation: string; record_type: string; records: string; bytes: string }>(
    `WITH rels AS (
       SELECT c.relfilenode, c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relfilenode <> 0
       UNION ALL
       SELECT t.relfilenode, c.relname || ' (toast)' FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace JOIN pg_class t ON t.oid = c.reltoastrelid WHERE n.nspname = $1
       UNION ALL
       SELECT i.relfilenode, c.relname || ' (toast index)' FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace JOIN pg_index x ON x.indrelid = c.reltoastrelid JOIN pg_class i ON i.oid = x.indexrelid WHERE n.nspname = $1),
     w AS (SELECT r.xid, r.resource_manager, r.record_type, r.record_length + r.fpi_length AS bytes,
                  (regexp_match(r.block_ref, 'rel \\d+/\\d+/(\\d+)'))[1]::oid AS filenode
             FROM public.pg_get_wal_records_info($2::pg_lsn, $3::pg_lsn) r),
     mine AS (SELECT w.*, rels.relname FROM w JOIN rels ON rels.relfilenode = w.filenode)
     SELECT relname AS relation, record_type, count(*) AS records, sum(bytes) AS bytes FROM mine GROUP BY 1, 2
     UNION ALL
     SELECT '(commit)', record_type, count(*), sum(bytes) FROM w
      WHERE w.resource_manager = 'Transaction' AND w.xid IN (SELECT xid FROM mine) GROUP BY 2
     ORDER BY bytes DESC`,
    [schema, from, to],
  );
  return rows.map((r) => ({ relation: r.relation, recordType: r.record_type, records: Number(r.records), bytes: Number(r.bytes) }));
}
