import { describe, expect, it } from 'vitest';
import { classify } from './purchase-trace.ts';

describe('purchase trace: which statement carries which purchases', () => {
  it('names the intents of a claim batch, of a claim alone, and of a VERIFIED write', () => {
    expect(classify('WITH x AS (...), c AS (INSERT INTO idempotency_keys AS i ...', [['pi_a', 'pi_b'], ['k1', 'k2']])).toEqual({ kind: 'claim', ids: ['pi_a', 'pi_b'] });
    expect(classify('WITH c AS (INSERT INTO idempotency_keys AS i ...', ['pi_c', 'k'])).toEqual({ kind: 'claim', ids: ['pi_c'] });
    const events = JSON.stringify([{ id: 'pi_a', event_id: 'verify:pi_a:0x01' }, { id: 'pi_b', event_id: 'verify:pi_b:0x02' }]);
    expect(classify('WITH ev AS (...), up AS (UPDATE actors a SET ...', [events, '[]'])).toEqual({ kind: 'write', ids: ['pi_a', 'pi_b'] });
  });

  it('leaves other statements out: a quote, an update of another event', () => {
    expect(classify('WITH up AS (UPDATE actors a SET ...', [JSON.stringify([{ id: 'pi_a', event_id: 'quote:pi_a' }])])).toBeUndefined();
    expect(classify('SELECT state FROM actors WHERE id = $1', ['pi_a'])).toBeUndefined();
  });
});
