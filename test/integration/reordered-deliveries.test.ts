import { machineRegistry } from '../../runtime/machines.ts';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ActorHost } from '../../runtime/engine/actor-host.ts';
import { openEmbedded } from '../helpers/backends.ts';
import { createEvent, T0 } from '../fixtures/payment-intent.ts';

/**
 * Duplicate and reordered deliveries through the engine (PGlite + in-process bus, for speed):
 * the signals of one settled payment arrive shuffled and each twice. Whatever the order:
 * every event is journaled at most once, `payment.confirmed` is emitted at most once, and the
 * intent is PAID exactly when a depth of 12 was reported after its inclusion was known.
 */
describe('duplicate and reordered deliveries', () => {
  it('end consistent for any order', async () => {
    const b = await openEmbedded();
    const host = new ActorHost({ db: b.db, bus: b.bus, registry: machineRegistry() });
    const legs = { tx_hash: 'tx1', from: 'tanm1payer', merchant_leg: '980000000', fee_leg: '20000000' };
    const life = [
      { type: 'chain.tx.seen', id: 'seen', at: T0 + 1, ...legs },
      { type: 'chain.tx.included', id: 'inc', at: T0 + 2, ...legs, block_height: 100, block_hash: 'b100', receipt: 'success', head: 100 },
      ...Array.from({ length: 11 }, (_, i) => ({ type: 'chain.block', id: `blk${101 + i}`, at: T0 + 3 + i, head: 101 + i })),
    ];
    let run = 0;
    try {
      await fc.assert(
        fc.asyncProperty(fc.shuffledSubarray([...life, ...life], { minLength: life.length * 2 }), async (order) => {
          const id = `pay_reorder_${run++}`;
          await host.apply({ kind: 'payment_intent', id, merchant: 'm', mode: 'test' }, { ...createEvent({ intent_id: id }), id: `c${id}` });
          let inclusionKnown = false;
          let deepAfterInclusion = false;
          for (const e of order) {
            const r = await host.apply({ kind: 'payment_intent', id }, e);
            if (e.type === 'chain.tx.included' && r.outcome === 'applied') inclusionKnown = true;
            if (e.type === 'chain.block' && inclusionKnown && 'head' in e && e.head >= 111) deepAfterInclusion = true;
          }
          const { rows } = await b.db.query<{ state: string }>(`SELECT state FROM actors WHERE id = $1`, [id]);
          const journal = await b.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM actor_events WHERE actor_id = $1 GROUP BY event_id HAVING count(*) > 1`, [id]);
          expect(journal.rows).toHaveLength(0);
          const confirmed = await b.db.query(`SELECT 1 FROM outbox WHERE actor_id = $1 AND payload->'event'->>'type' = 'payment.confirmed'`, [id]);
          expect(confirmed.rowCount).toBeLessThanOrEqual(1);
          expect(rows[0]!.state === 'PAID').toBe(deepAfterInclusion);
        }),
        { numRuns: 25 },
      );
    } finally {
      await b.close();
    }
  }, 120_000);
});
