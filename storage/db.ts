/**
 * The database port. Two adapters implement it: PostgreSQL through `pg` and the embedded
 * PGlite. Everything above storage/ speaks SQL through this interface only, so the same
 * repositories and engine run on both.
 */
export type SqlParam = string | number | bigint | boolean | null | Date | Uint8Array | readonly unknown[] | Record<string, unknown>;

export interface QueryResult<Row> {
  rows: Row[];
  rowCount: number;
}

export interface Queryable {
  query: <Row = Record<string, unknown>>(sql: string, params?: readonly SqlParam[]) => Promise<QueryResult<Row>>;
  /** Runs a script of several statements without parameters (migrations). */
  exec: (sql: string) => Promise<void>;
}

export interface Db extends Queryable {
  readonly kind: 'postgres' | 'pglite';
  /** Runs `fn` inside one transaction; commits when it resolves, rolls back when it throws. */
  tx<T>(fn: (q: Queryable) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/**
 * Run first in a transaction whose statements must be planned from the tables' current sizes.
 * A prepared statement's generic plan is made once per connection, often while a table is small
 * (a sequential scan, a sort), and kept until the table is analyzed, which with autovacuum off
 * is never: a statement run a few times a second over a table that grows (due timers, the
 * outbox) then reads every row each time. A custom plan costs a planning per run instead.
 */
export const FORCE_CUSTOM_PLAN = `SELECT set_config('plan_cache_mode', 'force_custom_plan', true)`;

/** Serialises values the way both drivers accept them: bigint as text, objects as JSON. */
export function toDriverParam(value: SqlParam): unknown {
  if (typeof value === 'bigint') return value.toString();
  return value;
}
