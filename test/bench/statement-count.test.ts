import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MarketServices } from '../../runtime/market/index.ts';
import type { Executions } from '../../runtime/market/executions.ts';
import { openEmbedded, openReal, realAvailable } from '../helpers/backends.ts';
import type { Backend } from '../helpers/backends.ts';
import { StatementCounter } from './statement-count.ts';

describe('StatementCounter (bench:execute statements per execution)', () => {
  let backend: Backend;
  beforeAll(async () => {
    backend = realAvailable ? await openReal({ poolSize: 2 }) : await openEmbedded();
  });
  afterAll(async () => backend.close());

  it('counts each statement, a transaction as BEGIN and COMMIT besides, and the relay apart', async () => {
    const c = new StatementCounter();
    const [db, relay] = [c.market(backend.db), c.relay(backend.db)];
    await db.query('SELECT 1');
    await db.tx(async (q) => {
      await q.query('SELECT 1');
      await q.query('SELECT 2');
    });
    await relay.query('SELECT 1');
    expect(c.take()).toEqual({ statements: 5, relay: 1, beforeAnswer: 0 });
    expect(c.take()).toEqual({ statements: 0, relay: 0, beforeAnswer: 0 });
  });

  it("counts an execution's statements up to its answer's hand-over, not those after", async () => {
    const c = new StatementCounter();
    const db = c.market(backend.db);
    // An execution that sends two statements, hands its answer over, then records it in a third.
    const executions = {
      async execute(_input: unknown, deliver?: (r: unknown) => void) {
        await db.query('SELECT 1');
        await db.query('SELECT 2');
        deliver?.({});
        await db.query('SELECT 3');
      },
    };
    c.watchAnswers({ executions: executions as unknown as Executions } as MarketServices);
    let delivered = 0;
    await executions.execute({}, () => delivered++);
    expect(delivered).toBe(1);
    expect(c.take()).toEqual({ statements: 3, relay: 0, beforeAnswer: 2 });
  });
});
