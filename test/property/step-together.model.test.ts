import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { replay } from '../../machines/kit/step.ts';
import { ActorHost } from '../../runtime/engine/actor-host.ts';
import type { ApplyResult } from '../../runtime/engine/actor-types.ts';
import { MachineRegistry } from '../../runtime/engine/registry.ts';
import type { Db } from '../../storage/db.ts';
import { backendFactories } from '../helpers/backends.ts';
import { orderDefinition } from '../fixtures/order-machine.ts';

/**
 * Events that wait for an actor's step in flight are applied together in its next step
 * (ActorHost's mailbox, runtime/engine/step-together.ts). Whatever the events (accepted,
 * ignored, repeated within the batch or from before it, malformed), and whether the host's
 * cached row is current, stale or absent: each caller gets what applying the events one by
 * one gives, and the actor's rows (snapshot, journal, dedupe, timers, outbox) are the same,
 * with the journal replaying to the snapshot.
 */
const registry = new MachineRegistry([orderDefinition]);
const T0 = 1_700_000_000_000;

// Events are picked from a pool by index, so the same id always carries the same event.
const pool: Array<Record<string, unknown>> = [
  ...Array.from({ length: 6 }, (_, i) => ({ type: 'order.add', id: `add-${i}`, at: T0 + 10 + i, n: i + 1 })),
  { type: 'order.close', id: 'close', at: T0 + 20 },
  { type: 'order.ping', id: 'ping-0', at: T0 + 21, to: 'elsewhere' },
  { type: 'order.ping', id: 'ping-1', at: T0 + 22, to: 'elsewhere' },
  { type: 'order.add', id: 'bad', at: T0 + 23, n: 'x' },
];
const pick = fc.nat(pool.length - 1).map((i) => pool[i]!);

type Answer = Pick<ApplyResult, 'outcome' | 'version' | 'status' | 'snapshot'> | { error: string };
const answer = (s: PromiseSettledResult<ApplyResult>): Answer =>
  s.status === 'fulfilled' ? { outcome: s.value.outcome, version: s.value.version, status: s.value.status, snapshot: s.value.snapshot } : { error: (s.reason as Error).constructor.name };

async function rowsOf(db: Db, id: string): Promise<unknown> {
  const q = async (sql: string) => JSON.parse(JSON.stringify((await db.query(sql, [id])).rows).replaceAll(id, '<id>')) as unknown[];
  return {
    actor: await q(`SELECT version, state, snapshot FROM actors WHERE id = $1`),
    journal: await q(`SELECT seq, event_id, event, state_before, state_after, at FROM actor_events WHERE actor_id = $1 ORDER BY seq`),
    dedupe: await q(`SELECT event_id, outcome, seq FROM processed_events WHERE actor_id = $1 ORDER BY event_id`),
    timers: await q(`SELECT name, kind, event_type, fire_at, generation, fired_at FROM timers WHERE actor_id = $1 ORDER BY name`),
    outbox: await q(`SELECT msg_id, subject, payload FROM outbox WHERE actor_id = $1 ORDER BY msg_id`),
  };
}

describe.each(backendFactories)('events applied together on %s', (name, open) => {
  it('equal the same events applied one by one', async () => {
    const b = await open();
    const one = new ActorHost({ db: b.db, bus: b.bus, registry, cacheSize: 0 });
    let run = 0;
    try {
      await fc.assert(
        fc.asyncProperty(fc.array(pick, { maxLength: 6 }), fc.array(pick, { minLength: 2, maxLength: 12 }), fc.constantFrom('current', 'stale', 'none'), async (before, batch, cache) => {
          const n = run++;
          const ids = { alone: `ord_alone_${n}`, together: `ord_together_${n}` };
          const hosts = { together: new ActorHost({ db: b.db, bus: b.bus, registry, ...(cache === 'none' ? { cacheSize: 0 } : {}) }) };
          const target = (id: string) => ({ kind: 'order', id, merchant: 'm_1', mode: 'test' as const });
          const create = { type: 'order.create', id: 'create', at: T0, ttl_ms: 60_000 };
          // The history before the batch; with 'stale', its last event is written by another host.
          const history = [create, ...before];
          for (const [i, e] of history.entries()) {
            await Promise.allSettled([one.apply(target(ids.alone), e)]);
            const writer = cache === 'stale' && i === history.length - 1 ? one : hosts.together;
            await Promise.allSettled([writer.apply(target(ids.together), e)]);
          }
          const alone: Answer[] = [];
          for (const e of batch) alone.push(answer((await Promise.allSettled([one.apply(target(ids.alone), e)]))[0]));
          // Posted at once: the first goes alone, the rest wait for it and share the next step.
          const together = (await Promise.allSettled(batch.map((e) => hosts.together.applyInOrder(target(ids.together), e)))).map(answer);
          expect(together).toEqual(alone);
          const [a, t] = [await rowsOf(b.db, ids.alone), await rowsOf(b.db, ids.together)];
          expect(t).toEqual(a);
          const journal = (await b.db.query<{ event: never }>(`SELECT event FROM actor_events WHERE actor_id = $1 ORDER BY seq`, [ids.together])).rows.map((r) => r.event);
          const stored = (await b.db.query<{ snapshot: unknown }>(`SELECT snapshot FROM actors WHERE id = $1`, [ids.together])).rows[0]!.snapshot;
          expect(replay(orderDefinition, journal)).toEqual(stored);
        }),
        { numRuns: name === 'postgres+nats' ? 60 : 25 },
      );
    } finally {
      await b.close();
    }
  }, 120_000);
});
