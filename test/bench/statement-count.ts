import type { Db, Queryable } from '../../storage/db.ts';

let sent = 0;

/** Every SQL statement the server sends through `db`, a transaction as BEGIN, its statements and COMMIT. */
export function countStatements(db: Db): Db {
  const wrap = (q: Queryable): Queryable => ({
    query: (sql, params) => {
      sent++;
      return q.query(sql, params);
    },
    exec: (sql) => {
      sent++;
      return q.exec(sql);
    },
  });
  return {
    ...wrap(db),
    kind: db.kind,
    tx: (fn) => {
      sent += 2;
      return db.tx((q) => fn(wrap(q)));
    },
    close: () => db.close(),
  };
}

export const statementsSent = (): number => sent;
