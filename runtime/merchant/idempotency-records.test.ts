/**
 * The first response recorded with an event (`withCreate`): the write takes the companion's
 * parameters when it is planned and, written with others, its batch rows (update-batch.ts);
 * both carry one rendering of the body per result (ADR 0095).
 */
import { expect, it } from 'vitest';
import type { ApplyResult } from '../engine/actor-types.ts';
import type { Db } from '../../storage/db.ts';
import { IdempotencyRecords } from './idempotency-records.ts';

const result = (version: number): ApplyResult => ({ outcome: 'applied', actorId: 'pi_1', kind: 'purchase', merchant: null, mode: null, version, status: 'VERIFIED', snapshot: { value: 'VERIFIED', context: { version } } });

it('renders the body once per result for the parameters and the batch rows, again for another result', () => {
  const records = new IdempotencyRecords({} as Db);
  const rendered: ApplyResult[] = [];
  const c = records.withCreate('pi_1', 'market', 'k1', 200, { 'content-type': 'application/json' }, (r) => {
    rendered.push(r);
    return JSON.stringify({ version: r.version });
  });
  const first = result(2);
  expect(c.params(first)[2]).toBe('{"version":2}');
  expect(c.batch!.rows(first)).toEqual([[{ actor_id: 'pi_1', status: 200, headers: { 'content-type': 'application/json' }, body: '{"version":2}', merchant: 'pi_1', mode: 'market', key: 'k1' }]]);
  expect(rendered).toEqual([first]);
  // A write retried after a refusal gives a new result: rendered from it.
  const again = result(3);
  expect(c.params(again)[2]).toBe('{"version":3}');
  expect(c.batch!.rows(again)[0]![0]!.body).toBe('{"version":3}');
  expect(rendered).toEqual([first, again]);
});
