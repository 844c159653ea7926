import type { Db, Queryable } from '../../storage/db.ts';

/** `db` with `note` called for every statement sent through it; `frame`: for BEGIN and COMMIT too. */
function watched(db: Db, note: (sql: string) => void, frame: boolean): Db {
  const wrap = (q: Queryable): Queryable => ({
    query: (sql, params) => {
      note(sql);
      return q.query(sql, params);
    },
    exec: (sql) => {
      note(sql);
      return q.exec(sql);
    },
  });
  return {
    ...wrap(db),
    kind: db.kind,
    tx: (fn) => {
      if (!frame) return db.tx((q) => fn(wrap(q)));
      note('BEGIN');
      return db.tx((q) => fn(wrap(q))).finally(() => note('COMMIT'));
    },
    close: () => db.close(),
  };
}

/**
 * Counts every statement sent through `db`, a transaction as BEGIN, its statements and
 * COMMIT, each by its first 60 characters: the round-trip guards' view of the database port.
 * `texts` keeps each statement whole, for what a statement's tail says (how it commits).
 */
export function counting(db: Db): { db: Db; statements: string[]; texts: string[] } {
  const statements: string[] = [];
  const texts: string[] = [];
  const note = (sql: string) => {
    statements.push(sql.replace(/\s+/g, ' ').trim().slice(0, 60));
    texts.push(sql);
  };
  return { db: watched(db, note, true), statements, texts };
}

/** A database whose statements are counted as they are sent. */
export interface CountingDb extends Db {
  readonly queries: number;
}

/**
 * Counts the statements sent through `db` (queries, scripts, statements inside transactions)
 * without keeping them, for long runs. `withTxFrame`: a transaction's BEGIN and COMMIT count
 * too, as the database port sees them (the benches).
 */
export function countingDb(db: Db, opts: { withTxFrame?: boolean } = {}): CountingDb {
  let n = 0;
  const inner = watched(db, () => n++, opts.withTxFrame ?? false);
  return {
    ...inner,
    get queries() {
      return n;
    },
  };
}
