/**
 * bench:execute's statement counts, kept by whichever process serves the marketplace (the bench
 * itself, or each market-serve.ts worker): every statement is a round trip to PostgreSQL, BEGIN
 * and COMMIT counted apart. The outbox relay gets a handle of its own, so its claims (which serve
 * every commit of a gathering window) are counted apart from the executions' statements.
 */
import type { Db, Queryable } from '../../storage/db.ts';
import type { MarketServices } from '../../runtime/market/index.ts';

export interface StatementCounts {
  /** The marketplace's statements, the relay's excepted. */
  statements: number;
  /** The outbox relay's. */
  relay: number;
  /** Of `statements`, those sent between an execution's start and its answer's hand-over (meaningful one at a time). */
  beforeAnswer: number;
}

export const NO_STATEMENTS: StatementCounts = { statements: 0, relay: 0, beforeAnswer: 0 };

export function addCounts(a: StatementCounts, b: StatementCounts): StatementCounts {
  return { statements: a.statements + b.statements, relay: a.relay + b.relay, beforeAnswer: a.beforeAnswer + b.beforeAnswer };
}

export class StatementCounter {
  private c: StatementCounts = { ...NO_STATEMENTS };

  /** The marketplace's handle. */
  market(db: Db): Db {
    return counted(db, () => this.c.statements++);
  }

  /** The outbox relay's handle. */
  relay(db: Db): Db {
    return counted(db, () => this.c.relay++);
  }

  /** Counts the statements each execution sends before its answer is handed over. */
  watchAnswers(market: MarketServices): void {
    const run = market.executions.execute.bind(market.executions);
    market.executions.execute = (input, deliver) => {
      const at = this.c.statements;
      return run(input, (r) => {
        this.c.beforeAnswer += this.c.statements - at;
        deliver?.(r);
      });
    };
  }

  /** The counts since the last call (or since the start). */
  take(): StatementCounts {
    const out = this.c;
    this.c = { ...NO_STATEMENTS };
    return out;
  }
}

function counted(db: Db, bump: () => void): Db {
  const q = (inner: Queryable): Queryable => ({ query: (sql, params) => (bump(), inner.query(sql, params)), exec: (sql) => inner.exec(sql) });
  return {
    kind: db.kind,
    ...q(db),
    tx: (fn) => (bump(), bump(), db.tx((t) => fn(q(t)))),
    close: () => db.close(),
  };
}
