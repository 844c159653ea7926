import type { Db, Queryable } from '../../storage/db.ts';

/**
 * Counts every statement sent through `db`, a transaction as BEGIN, its statements and
 * COMMIT, each by its first 60 characters: the round-trip guards' view of the database port.
 */
export function counting(db: Db): { db: Db; statements: string[] } {
  const statements: string[] = [];
  const note = (sql: string) => statements.push(sql.replace(/\s+/g, ' ').trim().slice(0, 60));
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
  const counted: Db = {
    ...wrap(db),
    kind: db.kind,
    tx: (fn) => {
      note('BEGIN');
      return db.tx((q) => fn(wrap(q))).finally(() => note('COMMIT'));
    },
    close: () => db.close(),
  };
  return { db: counted, statements };
}
