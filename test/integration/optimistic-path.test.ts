import { machineRegistry } from '../../runtime/machines.ts';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { replay } from '../../machines/kit/step.ts';
import { paymentIntentDefinition } from '../../machines/payment-intent/definition.ts';
import { ActorHost } from '../../runtime/engine/actor-host.ts';
import { backendFactories } from '../helpers/backends.ts';
import { createEvent, T0 } from '../fixtures/payment-intent.ts';

/**
 * The optimistic path (ADR 0012) under random schedules: two hosts with caches of their own
 * take the signals of one payment, each delivered twice, in any order, some pairs at once. A
 * host's cached row is stale whenever the other host wrote last. Whatever the schedule: the
 * journal holds each event at most once with contiguous sequence numbers, the stored version
 * is the journal's length, replaying the journal rebuilds the stored snapshot exactly, and
 * `payment.confirmed` is written at most once.
 */
describe.each(backendFactories)('optimistic path with stale caches on %s', (_name, open) => {
  it('ends consistent for any schedule over two hosts', async () => {
    const b = await open();
    const registry = machineRegistry();
    const hosts = [new ActorHost({ db: b.db, bus: b.bus, registry }), new ActorHost({ db: b.db, bus: b.bus, registry })] as const;
    const legs = { tx_hash: 'tx1', from: 'tanm1payer', merchant_leg: '980000000', fee_leg: '20000000' };
    const life = [
      { type: 'chain.tx.seen', id: 'seen', at: T0 + 1, ...legs },
      { type: 'chain.tx.included', id: 'inc', at: T0 + 2, ...legs, block_height: 100, block_hash: 'b100', receipt: 'success', head: 100 },
      ...Array.from({ length: 11 }, (_, i) => ({ type: 'chain.block', id: `blk${101 + i}`, at: T0 + 3 + i, head: 101 + i })),
      { type: 'intent.cancel', id: 'cancel', at: T0 + 20 },
    ];
    const step = fc.record({ host: fc.constantFrom(0, 1), together: fc.boolean() });
    let run = 0;
    try {
      await fc.assert(
        fc.asyncProperty(fc.shuffledSubarray([...life, ...life], { minLength: life.length * 2 }), fc.array(step, { minLength: life.length * 2, maxLength: life.length * 2 }), async (order, plan) => {
          const id = `pay_opt_${run++}`;
          const target = { kind: 'payment_intent', id, merchant: 'm', mode: 'test' as const };
          await hosts[0].apply(target, { ...createEvent({ intent_id: id }), id: `c${id}` });
          for (let i = 0; i < order.length; i++) {
            const p = plan[i]!;
            const next = order[i + 1];
            if (p.together && next) {
              // Two deliveries at once, one through each host: they race on the row.
              await Promise.all([hosts[p.host].apply(target, order[i]), hosts[1 - p.host]!.apply(target, next)]);
              i++;
            } else {
              await hosts[p.host].apply(target, order[i]);
            }
          }
          const stored = (await b.db.query<{ version: number; snapshot: unknown }>(`SELECT version, snapshot FROM actors WHERE id = $1`, [id])).rows[0]!;
          const journal = (await b.db.query<{ seq: number; event_id: string; event: never }>(`SELECT seq, event_id, event FROM actor_events WHERE actor_id = $1 ORDER BY seq`, [id])).rows;
          expect(new Set(journal.map((r) => r.event_id)).size).toBe(journal.length);
          expect(journal.map((r) => r.seq)).toEqual(Array.from({ length: journal.length }, (_, k) => k + 1));
          expect(stored.version).toBe(journal.length);
          expect(replay(paymentIntentDefinition, journal.map((r) => r.event))).toEqual(stored.snapshot);
          const confirmed = await b.db.query(`SELECT 1 FROM outbox WHERE actor_id = $1 AND payload->'event'->>'type' = 'payment.confirmed'`, [id]);
          expect(confirmed.rowCount).toBeLessThanOrEqual(1);
        }),
        { numRuns: 20 },
      );
    } finally {
      await b.close();
    }
  }, 180_000);
});
