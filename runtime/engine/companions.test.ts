import { describe, expect, it } from 'vitest';
import type { CreateCompanion } from './actor-types.ts';
import { companionRefused, joinCompanions } from './companions.ts';
import { COMPANION_REFUSED } from './write-statement.ts';

const companion = (over: Partial<CreateCompanion>): CreateCompanion => ({ name: 'c', arity: 0, cte: () => 'c AS (SELECT 1)', params: () => [], ...over });
/** A unique violation as the pg driver and PGlite both raise it. */
const violation = (constraint: string) => Object.assign(new Error(`duplicate key value violates unique constraint "${constraint}"`), { code: '23505', constraint });

describe('companion refusals', () => {
  it('a unique key the companion names, taken, refuses it as a failed guard does', () => {
    const bindings = companion({ unique: ['market_leg_nonces_pkey'] });
    expect(companionRefused(bindings, violation('market_leg_nonces_pkey'))).toBe(true);
    // The message alone names the constraint on drivers that leave the field out.
    expect(companionRefused(bindings, Object.assign(new Error('duplicate key value violates unique constraint "market_leg_nonces_pkey"'), { code: '23505' }))).toBe(true);
  });

  it('any other failure is not a refusal: another key, another error, a companion naming no key', () => {
    const bindings = companion({ unique: ['market_leg_nonces_pkey'] });
    expect(companionRefused(bindings, violation('actor_events_pkey'))).toBe(false);
    expect(companionRefused(bindings, Object.assign(new Error('market_leg_nonces_pkey: deadlock detected'), { code: '40P01' }))).toBe(false);
    expect(companionRefused(companion({}), violation('market_leg_nonces_pkey'))).toBe(false);
    expect(companionRefused(bindings, 'market_leg_nonces_pkey')).toBe(false);
  });

  it('a guard still refuses by its marker', () => {
    const guarded = companion({ guard: () => 'true' });
    expect(companionRefused(guarded, new Error(`invalid input syntax for type integer: "${COMPANION_REFUSED}"`))).toBe(true);
    expect(companionRefused(companion({}), new Error(`invalid input syntax for type integer: "${COMPANION_REFUSED}"`))).toBe(false);
  });

  it('two companions joined keep the keys of both, so either one taken refuses the pair', () => {
    const joined = joinCompanions(companion({ name: 'a', unique: ['a_pkey'] }), companion({ name: 'b', guard: () => 'true', unique: ['b_pkey'] }));
    expect(joined.unique).toEqual(['a_pkey', 'b_pkey']);
    expect(companionRefused(joined, violation('a_pkey'))).toBe(true);
    expect(companionRefused(joined, violation('b_pkey'))).toBe(true);
    expect(joinCompanions(companion({ name: 'a' }), companion({ name: 'b' })).unique).toBeUndefined();
  });
});
